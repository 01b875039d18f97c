import { Inject } from '@nestjs/common';
import type { RedisClient } from './redis-client.js';
import { RedisKeys } from './redis-keys.js';
import { REDIS } from './tokens.js';

/**
 * What every repository over the router's Redis holds: the shared client and the key layout.
 * Subclasses declare no constructor of their own, so Nest injects these two through this one.
 */
export abstract class RedisRepository {
  constructor(
    @Inject(REDIS) protected readonly redis: RedisClient,
    protected readonly keys: RedisKeys,
  ) {}
}
