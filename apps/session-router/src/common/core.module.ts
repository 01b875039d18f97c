import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Subjects } from '#contracts';
import { JournalCipher, NatsBus } from '#messaging';
import type { RouterConfig } from '../config.js';
import { EdgeCredentials } from './edge-credentials.js';
import { EdgeLiveness } from './edge-liveness.js';
import { EdgeRpcClient } from './edge-rpc.client.js';
import { HistoryClient } from './history.client.js';
import { RedisKeys } from './redis-keys.js';
import { RedisLifecycle, redisProvider } from './redis.provider.js';
import { REDIS, ROUTER_CONFIG } from './tokens.js';

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
        { provide: NatsBus, useValue: new NatsBus(runtime.nc, runtime.subjects) },
        { provide: RedisKeys, useValue: new RedisKeys(runtime.subjects.namespace) },
        redisProvider,
        RedisLifecycle,
        EdgeLiveness,
        EdgeRpcClient,
        HistoryClient,
        EdgeCredentials,
        {
          provide: JournalCipher,
          useValue: new JournalCipher(
            runtime.config.journalKeys.current,
            runtime.config.journalKeys.previous,
          ),
        },
      ],
      exports: [
        ROUTER_CONFIG,
        NatsBus,
        REDIS,
        RedisKeys,
        EdgeLiveness,
        EdgeRpcClient,
        HistoryClient,
        EdgeCredentials,
        JournalCipher,
      ],
    };
  }
}
