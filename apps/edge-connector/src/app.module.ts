import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Subjects } from '#contracts';
import { NatsBus } from '#messaging';
import type { AgentDriver } from './agent/agent-driver.js';
import type { EdgeConfig } from './config.js';
import { EDGE_CONFIG } from './common/tokens.js';
import { HeartbeatModule } from './heartbeat/heartbeat.module.js';
import { RpcModule } from './rpc/rpc.module.js';
import { AGENT_DRIVER } from './sessions/sessions.service.js';

export interface EdgeAppDependencies {
  config: EdgeConfig;
  nc: NatsConnection;
  subjects: Subjects;
  driver: AgentDriver;
}

/** What main.ts built before Nest starts, available to every module. */
@Global()
@Module({})
class CoreModule {
  static register(deps: EdgeAppDependencies): DynamicModule {
    const providers = [
      { provide: EDGE_CONFIG, useValue: deps.config },
      { provide: NatsBus, useValue: new NatsBus(deps.nc, deps.subjects) },
      { provide: AGENT_DRIVER, useValue: deps.driver },
    ];
    return { module: CoreModule, providers, exports: providers.map((provider) => provider.provide) };
  }
}

@Module({})
export class AppModule {
  static register(deps: EdgeAppDependencies): DynamicModule {
    return { module: AppModule, imports: [CoreModule.register(deps), RpcModule, HeartbeatModule] };
  }
}
