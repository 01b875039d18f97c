import { Inject, Injectable, Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import type { RouterConfig } from '../config.js';
import { createRedisClient, type RedisClient } from './redis-client.js';
import { describeRedis } from './redis-topology.js';
import { REDIS, ROUTER_CONFIG } from './tokens.js';

export const redisProvider: Provider = {
  provide: REDIS,
  inject: [ROUTER_CONFIG],
  useFactory: (config: RouterConfig): RedisClient => {
    const log = new Logger('Redis');
    log.log(`Connecting to ${describeRedis(config.redis)}.`);
    // Reconnection errors repeat every few hundred ms while a node is away: one line per change.
    let last = '';
    return createRedisClient(config.redis, {
      connectionName: `${config.namespace}-session-router`,
      onError: (error) => {
        if (error.message === last) return;
        last = error.message;
        log.warn(`Redis connection: ${error.message}`);
      },
    });
  },
};

/** Quits Redis last, once the transport has finished every in-flight handler. */
@Injectable()
export class RedisLifecycle implements OnApplicationShutdown {
  private readonly log = new Logger(RedisLifecycle.name);

  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  async onApplicationShutdown(): Promise<void> {
    try {
      await this.redis.quit();
    } catch (error) {
      this.log.warn(`Redis quit failed: ${(error as Error).message}`);
      this.redis.disconnect();
    }
  }
}
