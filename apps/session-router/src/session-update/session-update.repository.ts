import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { SESSION_STATE_TTL_MS } from '../common/limits.js';
import { LuaScript } from '../common/lua-script.js';
import { RedisKeys } from '../common/redis-keys.js';
import { REDIS } from '../common/tokens.js';

export interface SessionState {
  revision: number | null;
  epoch: string | null;
  owner?: string;
  edge?: string;
}

export interface SessionMeta {
  owner: string;
  access: string;
  edge: string;
  running: boolean;
  closed: boolean;
  created: number;
}

/** Returns the session's epoch, creating it from ARGV[1] when missing. */
const ENSURE_EPOCH = new LuaScript(`
local epoch = redis.call('GET', KEYS[1])
if epoch then return epoch end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
`);

/**
 * Raises the revision only forward and, with it, the session meta (a stale update must not undo
 * a newer running/closed state). Returns 1 when Redis already had this revision or a newer one.
 */
const COMMIT = new LuaScript(`
local current = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) <= current then return 1 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[2], 'owner', ARGV[3], 'access', ARGV[4], 'edge', ARGV[5],
  'running', ARGV[6], 'closed', ARGV[7])
redis.call('HSETNX', KEYS[2], 'created', ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 0
`);

@Injectable()
export class SessionUpdateRepository {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async state(sessionId: string): Promise<SessionState> {
    const results = (await this.redis
      .pipeline()
      .get(this.keys.revision(sessionId))
      .get(this.keys.epoch(sessionId))
      .hmget(this.keys.meta(sessionId), 'owner', 'edge')
      .exec()) as [Error | null, unknown][];
    for (const [error] of results) if (error) throw error;
    const revision = results[0]?.[1] as string | null;
    const epoch = results[1]?.[1] as string | null;
    const [owner, edge] = (results[2]?.[1] ?? []) as (string | null)[];
    return {
      revision: revision === null ? null : Number(revision),
      epoch,
      owner: owner ?? undefined,
      edge: edge ?? undefined,
    };
  }

  async ensureEpoch(sessionId: string, candidate: string): Promise<string> {
    return String(
      await ENSURE_EPOCH.run(this.redis, [this.keys.epoch(sessionId)], [candidate, SESSION_STATE_TTL_MS]),
    );
  }

  /** True when Redis already had this revision or a newer one. */
  async commit(sessionId: string, revision: number, meta: SessionMeta): Promise<boolean> {
    const duplicate = await COMMIT.run(
      this.redis,
      [this.keys.revision(sessionId), this.keys.meta(sessionId), this.keys.epoch(sessionId)],
      [
        revision,
        SESSION_STATE_TTL_MS,
        meta.owner,
        meta.access,
        meta.edge,
        meta.running ? '1' : '0',
        meta.closed ? '1' : '0',
        meta.created,
      ],
    );
    return duplicate === 1;
  }
}
