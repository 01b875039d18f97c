import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Limits } from '#contracts';
import { RedisKeys } from '../common/redis-keys.js';
import { REDIS } from '../common/tokens.js';

export interface PresenceRecord {
  device: string;
  agent_kinds: string[];
  installations: number;
  live_sessions: number;
  max_sessions: number;
  seen_at: number;
}

@Injectable()
export class PresenceRepository {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** The key lives as long as the edge keeps sending heartbeats; silence makes it offline. */
  async record(edgeId: string, record: PresenceRecord): Promise<void> {
    await this.redis.set(
      this.keys.presence(edgeId),
      JSON.stringify(record),
      'PX',
      Limits.EDGE_PRESENCE_TTL_MS,
    );
  }

  /** Which of the ids have a live presence key, in one round trip. */
  async online(edgeIds: string[]): Promise<string[]> {
    if (edgeIds.length === 0) return [];
    const values = await this.redis.mget(edgeIds.map((id) => this.keys.presence(id)));
    return edgeIds.filter((_, index) => values[index] !== null);
  }
}
