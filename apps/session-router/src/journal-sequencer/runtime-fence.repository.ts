import { Injectable } from '@nestjs/common';
import { SESSION_STATE_TTL_MS } from '../common/limits.js';
import { LuaScript } from '../common/lua-script.js';
import { RedisRepository } from '../common/redis-repository.js';

/** The cached fence, or `seed` written when Redis has none (a lost cache is re-seeded, never reset). */
const SEED = new LuaScript(`
local current = redis.call('GET', KEYS[1])
if current then return tonumber(current) end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return tonumber(ARGV[1])
`);

/** A new runtime: the fence moves forward by one (from `seed` when Redis had lost it). */
const BUMP = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[1]) end
local fence = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return fence
`);

/**
 * The session's runtime fence (reference orca §3.3 step 5, §9.1): 1 for the runtime `start`
 * created, plus one for each runtime a `resume` started since. Redis caches it; the journal rows
 * carry it, so a lost counter is re-seeded from the last row's fence.
 */
@Injectable()
export class RuntimeFenceRepository extends RedisRepository {
  async cached(sessionId: string): Promise<number | null> {
    const value = await this.redis.get(this.keys.fence(sessionId));
    return value === null ? null : Number(value);
  }

  async seed(sessionId: string, fence: number): Promise<number> {
    return Number(await SEED.run(this.redis, [this.keys.fence(sessionId)], [fence, SESSION_STATE_TTL_MS]));
  }

  async bump(sessionId: string, seed: number): Promise<number> {
    return Number(await BUMP.run(this.redis, [this.keys.fence(sessionId)], [seed, SESSION_STATE_TTL_MS]));
  }
}
