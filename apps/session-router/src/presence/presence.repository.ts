import { Injectable } from '@nestjs/common';
import { parsePresence, type PresenceRecord } from '../common/presence-record.js';
import { RedisRepository } from '../common/redis-repository.js';

export type { PresenceRecord } from '../common/presence-record.js';

/** A leaving edge's record stays this long, so every replica's next liveness check reads it. */
const LEAVING_RECORD_MS = 10_000;

@Injectable()
export class PresenceRepository extends RedisRepository {
  /** The key lives as long as the edge keeps sending heartbeats; silence makes it offline. */
  async record(edgeId: string, record: PresenceRecord): Promise<void> {
    const ttl = record.leaving ? LEAVING_RECORD_MS : record.ttl_ms;
    await this.redis.set(this.keys.presence(edgeId), JSON.stringify(record), 'PX', ttl);
  }

  /**
   * Which of the ids are online (a record that is not leaving). One GET per edge, never MGET or a
   * pipeline: presence keys of different edges live in different Redis Cluster slots, and
   * auto-pipelining still sends them in one round trip.
   */
  async online(edgeIds: string[]): Promise<string[]> {
    if (edgeIds.length === 0) return [];
    const values = await Promise.all(edgeIds.map((id) => this.redis.get(this.keys.presence(id))));
    return edgeIds.filter((_, index) => {
      const record = parsePresence(values[index] ?? null);
      return record !== null && !record.leaving;
    });
  }
}
