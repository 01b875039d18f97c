import { Injectable } from '@nestjs/common';
import { parsePresence, restartedSince, type PresenceRecord } from '../common/presence-record.js';
import { RedisRepository } from '../common/redis-repository.js';

export type { PresenceRecord } from '../common/presence-record.js';

/** A leaving edge's record stays this long, so every replica's next liveness check reads it. */
const LEAVING_RECORD_MS = 10_000;
/**
 * A restart mark outlives every call that could still be waiting on the old process (the router's
 * edge RPC timeout and a watch's wait are far shorter).
 */
const RESTART_MARK_MS = 120_000;

@Injectable()
export class PresenceRepository extends RedisRepository {
  /**
   * The key lives as long as the edge keeps sending heartbeats; silence makes it offline. The SET
   * hands back the record it replaced (no extra round trip), and a new boot id there marks the
   * edge restarted for the liveness checks (common/edge-liveness.ts).
   */
  async record(edgeId: string, record: PresenceRecord): Promise<void> {
    const ttl = record.leaving ? LEAVING_RECORD_MS : record.ttl_ms;
    const previous = await this.redis.set(
      this.keys.presence(edgeId),
      JSON.stringify(record),
      'PX',
      ttl,
      'GET',
    );
    if (restartedSince(parsePresence(previous), record)) {
      await this.redis.set(this.keys.restarted(edgeId), String(record.seen_at), 'PX', RESTART_MARK_MS);
    }
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
