import { Inject, Injectable } from '@nestjs/common';
import type { RedisClient } from '../common/redis-client.js';
import { SESSION_STATE_TTL_MS } from '../common/limits.js';
import { RedisKeys } from '../common/redis-keys.js';
import { REDIS } from '../common/tokens.js';

/**
 * Title overrides cached beside the session's other Redis state, so every live reply can carry
 * the override at the cost of one GET. History holds the durable copy (and applies it to the
 * sessions list, archived views and resume seeds); this cache lives as long as the session state.
 */
@Injectable()
export class TitleOverrideRepository {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  get(sessionId: string): Promise<string | null> {
    return this.redis.get(this.keys.titleOverride(sessionId));
  }

  async set(sessionId: string, title: string): Promise<void> {
    await this.redis.set(this.keys.titleOverride(sessionId), title, 'PX', SESSION_STATE_TTL_MS);
  }

  async clear(sessionId: string): Promise<void> {
    await this.redis.del(this.keys.titleOverride(sessionId));
  }
}
