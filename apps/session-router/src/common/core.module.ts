import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Subjects } from '#contracts';
import { NATS_CONNECTION } from '#messaging';
import type { RouterConfig } from '../config.js';
import { EdgeLiveness } from './edge-liveness.js';
import { EdgeRpcClient } from './edge-rpc.client.js';
import { HistoryClient } from './history.client.js';
import { RedisKeys } from './redis-keys.js';
import { RedisLifecycle, redisProvider } from './redis.provider.js';
import { REDIS, ROUTER_CONFIG, SUBJECTS } from './tokens.js';

export interface RouterRuntime {
  config: RouterConfig;
  nc: NatsConnection;
  subjects: Subjects;
}

/** What every context shares: config, the NATS connection, subjects, Redis, the edge and history clients. */
@Global()
@Module({})
export class CoreModule {
  static register(runtime: RouterRuntime): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        { provide: ROUTER_CONFIG, useValue: runtime.config },
        { provide: NATS_CONNECTION, useValue: runtime.nc },
        { provide: SUBJECTS, useValue: runtime.subjects },
        { provide: RedisKeys, useValue: new RedisKeys(runtime.subjects.namespace) },
        redisProvider,
        RedisLifecycle,
        EdgeLiveness,
        EdgeRpcClient,
        HistoryClient,
      ],
      exports: [
        ROUTER_CONFIG,
        NATS_CONNECTION,
        SUBJECTS,
        REDIS,
        RedisKeys,
        EdgeLiveness,
        EdgeRpcClient,
        HistoryClient,
      ],
    };
  }
}
