// The ledger's atomic steps (operation-ledger.repository.ts runs them). Each touches one
// record's keys, which carry the session's hash tag, so every script stays in one cluster slot.
import { LuaScript } from '../common/lua-script.js';

/**
 * The admission (reference orca §3.3 step 2, §9.1), atomic: the record first (replay or conflict,
 * whatever the fence or the capacity say), then expiry of an unseen id, the runtime fence, the
 * live-record count (expired index entries are dropped first; the records themselves expire by
 * PEXPIREAT), and only then a pending record with this replica's claim.
 */
export const ADMIT = new LuaScript(`
local record = redis.call('HGETALL', KEYS[1])
if #record > 0 then
  for i = 1, #record, 2 do
    if record[i] == 'fp' then
      if record[i + 1] ~= ARGV[1] then return {'conflict'} end
      return {'replay', record}
    end
  end
  return {'conflict'}
end
local now = tonumber(ARGV[2])
if tonumber(ARGV[3]) < now - tonumber(ARGV[7]) then return {'expired'} end
local fence = redis.call('GET', KEYS[3]) or '0'
if ARGV[9] ~= '' and fence ~= ARGV[9] then return {'stale', fence} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return {'capacity'} end
redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'state', 'pending', 'claim', ARGV[4], 'claim_until', ARGV[5],
  'ts', ARGV[3], 'recorded', ARGV[2], 'fence', fence)
redis.call('PEXPIREAT', KEYS[1], ARGV[8])
redis.call('ZADD', KEYS[2], ARGV[8], ARGV[10])
local ttl = redis.call('PTTL', KEYS[2])
if ttl < 0 or now + ttl < tonumber(ARGV[8]) then redis.call('PEXPIREAT', KEYS[2], ARGV[8]) end
return {'admit', fence}
`);

/**
 * A pending record whose claim expired (its replica died or stalled). Before the edge was asked
 * the operation is run again by the new claimant, paying the fence check again (a refusal drops
 * the record, as at admission); after, it is only settled: never dispatched twice.
 */
export const TAKEOVER = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state', 'claim', 'claim_until', 'dispatching')
if r[1] ~= 'pending' or r[2] ~= ARGV[1] then return {'moved'} end
if tonumber(r[3] or '0') > tonumber(ARGV[4]) then return {'moved'} end
if r[4] then
  redis.call('HSET', KEYS[1], 'claim', ARGV[2], 'claim_until', ARGV[3])
  return {'settle'}
end
local fence = redis.call('GET', KEYS[3]) or '0'
if ARGV[5] ~= '' and fence ~= ARGV[5] then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[6])
  return {'stale', fence}
end
redis.call('HSET', KEYS[1], 'claim', ARGV[2], 'claim_until', ARGV[3], 'fence', fence)
return {'run', fence}
`);

/**
 * Moves a live run's claim on (never back), only while this replica still holds it: even one
 * that ran out, as long as no other replica took it over, since the run is alive after all.
 */
export const RENEW = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state', 'claim', 'claim_until')
if r[1] ~= 'pending' or r[2] ~= ARGV[1] then return 0 end
if tonumber(r[3] or '0') < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], 'claim_until', ARGV[2]) end
return 1
`);

/** Marks the dispatch as started, only while this replica still holds the claim. */
export const DISPATCHING = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state', 'claim')
if r[1] ~= 'pending' or r[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'dispatching', '1')
return 1
`);

/** Records the outcome once, by the claim holder. */
export const SETTLE = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state', 'claim')
if r[1] ~= 'pending' or r[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'answer', ARGV[3], 'claim_until', '0')
return 1
`);

/** Removes a record whose operation was refused before any effect, so an honest retry can run. */
export const DROP = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state', 'claim')
if r[1] ~= 'pending' or r[2] ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
return 1
`);

/**
 * The crash-boundary sweep's view of a submission history still shows `pending`: a record whose
 * claim expired (its replica died) becomes `unknown` with the given answer, atomically, so a
 * client retry racing the sweep either sees it settled or takes it over first, never both.
 */
export const SWEEP = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state', 'claim_until')
if not r[1] then return 'absent' end
if r[1] ~= 'pending' then return r[1] end
if tonumber(r[2] or '0') > tonumber(ARGV[1]) then return 'running' end
redis.call('HSET', KEYS[1], 'state', 'unknown', 'answer', ARGV[2], 'claim_until', '0')
return 'swept'
`);

/**
 * A send whose outcome is `unknown` runs again under a new claim, on the client's explicit
 * `retry_unknown` only; the fence is checked again, as for a first run. The record keeps its id,
 * fingerprint and retention: it is the same operation.
 */
export const REOPEN = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state')
if r[1] ~= 'unknown' then return {'moved'} end
local fence = redis.call('GET', KEYS[2]) or '0'
if ARGV[3] ~= '' and fence ~= ARGV[3] then return {'stale', fence} end
redis.call('HSET', KEYS[1], 'state', 'pending', 'claim', ARGV[1], 'claim_until', ARGV[2])
redis.call('HDEL', KEYS[1], 'dispatching')
return {'run', fence}
`);

/** Replaces a settled record's outcome (the reconciler learned what became of an unknown send). */
export const RESETTLE = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state')
if r[1] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'answer', ARGV[3])
return 1
`);
