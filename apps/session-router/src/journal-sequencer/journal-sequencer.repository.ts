import { Injectable } from '@nestjs/common';
import { SESSION_STATE_TTL_MS } from '../common/limits.js';
import { LuaScript } from '../common/lua-script.js';
import { RedisRepository } from '../common/redis-repository.js';

/** Where a session's journal stands: epoch, last row's sequence and its stream sequence. */
export interface JournalHead {
  epoch: string;
  /** Sequence of the last row in `epoch` (0: the epoch has no row yet). */
  sequence: number;
  /** JetStream sequence of the last message on the session's journal subject (0: none). */
  streamSequence: number;
  /** Edge revision of the last row, or null when unknown (a fresh epoch with no row). */
  revision: number | null;
}

export interface SessionState {
  /** Null when Redis lost (or never had) any part of the head: re-seed it from the stream. */
  head: JournalHead | null;
  owner?: string;
  edge?: string;
  access?: string;
  /** The cached runtime fence (absent: re-seed it from the journal). */
  fence?: number;
  /**
   * Stream sequence of the last row an edge update wrote (router-written submission rows may
   * follow it): the row lifecycle events compare with.
   */
  edgeStreamSequence?: number;
  /** The session was deleted (saved history tombstoned) while Redis kept the marker. */
  deleted: boolean;
}

export interface SessionMeta {
  owner: string;
  access: string;
  edge: string;
  running: boolean;
  closed: boolean;
  created: number;
}

/**
 * Moves the cached journal head forward. The stream sequence orders heads across epochs (it only
 * grows), so a head older than the cached one (a slow replica, a racing re-seed) changes nothing.
 * The edge revision is raised only forward and, with it, the session meta (a stale update must
 * not undo a newer running/closed state). An edge row (meta given) also moves the stream sequence
 * of the last edge row. Returns 1 when the revision did not move.
 */
const ADVANCE = new LuaScript(`
local cached = tonumber(redis.call('GET', KEYS[5]) or '-1')
local missing = redis.call('EXISTS', KEYS[3]) == 0 or redis.call('EXISTS', KEYS[4]) == 0
if missing or tonumber(ARGV[3]) > cached then
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[5])
  redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[5])
  redis.call('SET', KEYS[5], ARGV[3], 'PX', ARGV[5])
end
if ARGV[6] ~= '' and tonumber(ARGV[3]) > tonumber(redis.call('GET', KEYS[6]) or '-1') then
  redis.call('SET', KEYS[6], ARGV[3], 'PX', ARGV[5])
end
if ARGV[4] == '' then return 1 end
local current = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[4]) <= current then return 1 end
redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[2], 'owner', ARGV[6], 'access', ARGV[7], 'edge', ARGV[8],
    'running', ARGV[9], 'closed', ARGV[10])
  redis.call('HSETNX', KEYS[2], 'created', ARGV[11])
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
end
return 0
`);

@Injectable()
export class JournalSequencerRepository extends RedisRepository {
  async state(sessionId: string): Promise<SessionState> {
    const results = (await this.redis
      .pipeline()
      .mget(
        this.keys.revision(sessionId),
        this.keys.epoch(sessionId),
        this.keys.sequence(sessionId),
        this.keys.streamSequence(sessionId),
        this.keys.fence(sessionId),
        this.keys.edgeStreamSequence(sessionId),
        this.keys.deleted(sessionId),
      )
      .hmget(this.keys.meta(sessionId), 'owner', 'edge', 'access')
      .exec()) as [Error | null, unknown][];
    for (const [error] of results) if (error) throw error;
    const [revision, epoch, sequence, streamSequence, fence, edgeStreamSequence, deleted] =
      (results[0]?.[1] ?? []) as (string | null)[];
    const [owner, edge, access] = (results[1]?.[1] ?? []) as (string | null)[];
    const head =
      epoch &&
      sequence !== null &&
      sequence !== undefined &&
      streamSequence !== null &&
      streamSequence !== undefined
        ? {
            epoch,
            sequence: Number(sequence),
            streamSequence: Number(streamSequence),
            revision: revision === null || revision === undefined ? null : Number(revision),
          }
        : null;
    return {
      head,
      owner: owner ?? undefined,
      edge: edge ?? undefined,
      access: access || undefined,
      fence: fence === null || fence === undefined ? undefined : Number(fence),
      edgeStreamSequence:
        edgeStreamSequence === null || edgeStreamSequence === undefined
          ? undefined
          : Number(edgeStreamSequence),
      deleted: deleted !== null && deleted !== undefined,
    };
  }

  /** Marks the session deleted, for as long as its other state would be kept. */
  async markDeleted(sessionId: string): Promise<void> {
    await this.redis.set(this.keys.deleted(sessionId), '1', 'PX', SESSION_STATE_TTL_MS);
  }

  /**
   * Caches `head` (from a publish just stored, or re-seeded from the stream) and, when `meta` is
   * given, the session meta with it. True when Redis already had this revision or a newer one.
   */
  async advance(sessionId: string, head: JournalHead, meta?: SessionMeta): Promise<boolean> {
    const duplicate = await ADVANCE.run(
      this.redis,
      [
        this.keys.revision(sessionId),
        this.keys.meta(sessionId),
        this.keys.epoch(sessionId),
        this.keys.sequence(sessionId),
        this.keys.streamSequence(sessionId),
        this.keys.edgeStreamSequence(sessionId),
      ],
      [
        head.epoch,
        head.sequence,
        head.streamSequence,
        head.revision ?? '',
        SESSION_STATE_TTL_MS,
        meta?.owner ?? '',
        meta?.access ?? '',
        meta?.edge ?? '',
        meta?.running ? '1' : '0',
        meta?.closed ? '1' : '0',
        meta?.created ?? 0,
      ],
    );
    return duplicate === 1;
  }
}
