import { Injectable } from '@nestjs/common';
import { Limits } from '#contracts';
import { LuaScript } from '../common/lua-script.js';
import { LEASE_INDEX_SHARDS } from '../common/redis-keys.js';
import { leaseDueAt } from './lease-policy.js';
import { RedisRepository } from '../common/redis-repository.js';

export interface LeaseTouch {
  sessionId: string;
  edgeId: string;
  ownerId: string;
  accessId?: string;
  /** `resume` starts a fresh runtime age (reference §4). */
  resetAge: boolean;
  now: number;
}

export interface Lease {
  sessionId: string;
  edgeId: string;
  ownerId: string;
  accessId?: string;
  saved: boolean;
  touched: number;
  created: number;
  attempts: number;
}

/** Writes the lease hash and returns its creation time, in one round trip on one slot. */
const TOUCH = new LuaScript(`
local created = redis.call('HGET', KEYS[1], 'created')
if (not created) or ARGV[2] == '1' then
  created = ARGV[1]
end
redis.call('HSET', KEYS[1], 'created', created, 'touched', ARGV[1], 'saved', ARGV[3],
  'edge', ARGV[4], 'owner', ARGV[5], 'access', ARGV[6], 'attempts', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[7])
return created
`);

/** Claims a due lease: exactly one caller sees 1, and the lease is pushed ahead for a retry. */
const CLAIM = new LuaScript(`
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
return 0
`);

/**
 * Settles a claim only if nobody touched the lease since (the score is still the claim's): a
 * touch re-scores it, and then the touch wins. ARGV[3] = '' removes the lease, else re-scores it.
 */
const SETTLE = new LuaScript(`
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (not score) or tonumber(score) ~= tonumber(ARGV[2]) then
  return 0
end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
`);

/** The lease hash outlives its longest possible lease by this much, so abandoned ones vanish. */
const LEASE_HASH_TTL_MS = Limits.SAVED_SESSION_MAX_AGE_MS + 60 * 60_000;

@Injectable()
export class LeasesRepository extends RedisRepository {
  async touch(touch: LeaseTouch): Promise<number> {
    const saved = Boolean(touch.accessId);
    const created = Number(
      await TOUCH.run(
        this.redis,
        [this.keys.lease(touch.sessionId)],
        [
          touch.now,
          touch.resetAge ? '1' : '0',
          saved ? '1' : '0',
          touch.edgeId,
          touch.ownerId,
          touch.accessId ?? '',
          LEASE_HASH_TTL_MS,
        ],
      ),
    );
    const due = leaseDueAt({ saved, touched: touch.now, created });
    await this.redis.zadd(this.indexOf(touch.sessionId), due, touch.sessionId);
    return due;
  }

  /** The index shard holding the session's entry (one key: every command on it keeps to one slot). */
  private indexOf(sessionId: string): string {
    return this.keys.leases(this.keys.leaseShard(sessionId));
  }

  /**
   * Due sessions of every shard (one read per shard, in parallel), taken in turn from each shard
   * so a crowded shard does not starve the others, at most `limit` in all.
   */
  async dueSessionIds(now: number, limit: number): Promise<string[]> {
    const shards = await Promise.all(
      Array.from({ length: LEASE_INDEX_SHARDS }, (_, shard) =>
        this.redis.zrangebyscore(this.keys.leases(shard), '-inf', now, 'LIMIT', 0, limit),
      ),
    );
    const due: string[] = [];
    for (let index = 0; due.length < limit && shards.some((ids) => index < ids.length); index += 1) {
      for (const ids of shards) if (index < ids.length && due.length < limit) due.push(ids[index]!);
    }
    return due;
  }

  /** Entries in the whole index (every shard, and what is left of the pre-sharding index). */
  async count(): Promise<number> {
    const counts = await Promise.all([
      ...Array.from({ length: LEASE_INDEX_SHARDS }, (_, shard) => this.redis.zcard(this.keys.leases(shard))),
      this.redis.zcard(this.keys.legacyLeases()),
    ]);
    return counts.reduce((sum, value) => sum + value, 0);
  }

  /**
   * Moves up to `limit` entries of the pre-sharding index into their shards (an upgrade leaves
   * it behind; older replicas may still write to it during a rolling upgrade). ZADD NX keeps a
   * newer touch already in the shard; an older score only makes the reaper look early, and it
   * always re-reads the lease before acting. Returns how many entries moved.
   */
  async migrateLegacy(limit: number): Promise<number> {
    const legacy = this.keys.legacyLeases();
    const flat = await this.redis.zrangebyscore(legacy, '-inf', '+inf', 'WITHSCORES', 'LIMIT', 0, limit);
    for (let index = 0; index + 1 < flat.length; index += 2) {
      const sessionId = flat[index]!;
      await this.redis.zadd(this.indexOf(sessionId), 'NX', flat[index + 1]!, sessionId);
      await this.redis.zrem(legacy, sessionId);
    }
    return flat.length / 2;
  }

  async claim(sessionId: string, now: number, claimScore: number): Promise<boolean> {
    return (await CLAIM.run(this.redis, [this.indexOf(sessionId)], [sessionId, now, claimScore])) === 1;
  }

  /** Removes the lease unless it was touched since the claim; true when it was removed. */
  async release(sessionId: string, claimScore: number): Promise<boolean> {
    const removed =
      (await SETTLE.run(this.redis, [this.indexOf(sessionId)], [sessionId, claimScore, ''])) === 1;
    if (removed) await this.redis.del(this.keys.lease(sessionId));
    return removed;
  }

  async reschedule(sessionId: string, claimScore: number, dueAt: number): Promise<void> {
    await SETTLE.run(this.redis, [this.indexOf(sessionId)], [sessionId, claimScore, dueAt]);
  }

  async read(sessionId: string): Promise<Lease | null> {
    const hash = await this.redis.hgetall(this.keys.lease(sessionId));
    if (!hash.edge || !hash.owner || !hash.created || !hash.touched) return null;
    return {
      sessionId,
      edgeId: hash.edge,
      ownerId: hash.owner,
      accessId: hash.access || undefined,
      saved: hash.saved === '1',
      touched: Number(hash.touched),
      created: Number(hash.created),
      attempts: Number(hash.attempts ?? '0'),
    };
  }

  async countAttempt(sessionId: string): Promise<number> {
    return this.redis.hincrby(this.keys.lease(sessionId), 'attempts', 1);
  }

  async isRunning(sessionId: string): Promise<boolean> {
    return (await this.redis.hget(this.keys.meta(sessionId), 'running')) === '1';
  }
}
