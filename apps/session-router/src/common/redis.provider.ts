import { Inject, Injectable, Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { RouterConfig } from '../config.js';
import { REDIS, ROUTER_CONFIG } from './tokens.js';

export const redisProvider: Provider = {
  provide: REDIS,
  inject: [ROUTER_CONFIG],
  useFactory: (config: RouterConfig): Redis =>
    new Redis(config.redisUrl, {
      // Requests fail fast while Redis is away instead of queueing behind a user's watch.
      maxRetriesPerRequest: 2,
      enableAutoPipelining: true,
      lazyConnect: false,
    }),
};

/** Quits Redis last, once the transport has finished every in-flight handler. */
@Injectable()
export class RedisLifecycle implements OnApplicationShutdown {
  private readonly log = new Logger(RedisLifecycle.name);

  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    try {
      await this.redis.quit();
    } catch (error) {
      this.log.warn(`Redis quit failed: ${(error as Error).message}`);
      this.redis.disconnect();
    }
  }
}
