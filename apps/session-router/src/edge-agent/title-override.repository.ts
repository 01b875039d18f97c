import { Injectable } from '@nestjs/common';
import { SESSION_STATE_TTL_MS } from '../common/limits.js';
import { RedisRepository } from '../common/redis-repository.js';

/**
 * Title overrides cached beside the session's other Redis state, so every live reply can carry
 * the override (each replica keeps what it read: title-overrides.ts). History holds the durable
 * copy (and applies it to the sessions list, archived views and resume seeds); this cache lives
 * as long as the session state.
 */
@Injectable()
export class TitleOverrideRepository extends RedisRepository {
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
