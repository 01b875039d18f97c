import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EdgeAgentResult } from '#contracts';
import { LuaScript } from '../common/lua-script.js';
import { RedisRepository } from '../common/redis-repository.js';

/** A record's life: admitted `pending`, then settled once (`unknown` may still be recorded by a takeover). */
export type OperationState = 'pending' | 'succeeded' | 'failed' | 'unknown';

export interface OperationRecord {
  fingerprint: string;
  state: OperationState;
  /** The token of the replica running it, and until when that claim holds. */
  claim: string;
  claimUntil: number;
  /** Set right before the edge was asked: from here on the effect may have happened. */
  dispatching: boolean;
  fence: number;
  recordedAt: number;
  /** The settled reply (absent while pending). */
  answer?: EdgeAgentResult;
}

export type Admission =
  | { kind: 'admit'; claim: string; fence: number }
  | { kind: 'replay'; record: OperationRecord }
  | { kind: 'conflict' }
  | { kind: 'expired' }
  | { kind: 'capacity' }
  | { kind: 'stale'; fence: number };

export type Takeover =
  | { kind: 'run'; claim: string; fence: number }
  | { kind: 'settle'; claim: string }
  | { kind: 'stale'; fence: number }
  /** The record changed meanwhile (settled, or another replica took it): read it again. */
  | { kind: 'moved' };

export interface AdmitInput {
  sessionId: string;
  operationId: string;
  fingerprint: string;
  timestamp: number;
  now: number;
  /** Absolute ms; computed by `retentionExpiry`. */
  expiresAt: number;
  expectedFence?: number;
  claimMs: number;
  capacity: number;
  maxNewAgeMs: number;
}

/**
 * The admission (reference orca §3.3 step 2, §9.1), atomic: the record first (replay or conflict,
 * whatever the fence or the capacity say), then expiry of an unseen id, the runtime fence, the
 * live-record count (expired index entries are dropped first; the records themselves expire by
 * PEXPIREAT), and only then a pending record with this replica's claim. Every key carries the
 * session's hash tag, so the script touches one cluster slot.
 */
const ADMIT = new LuaScript(`
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
const TAKEOVER = new LuaScript(`
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

/** Marks the dispatch as started, only while this replica still holds the claim. */
const DISPATCHING = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state', 'claim')
if r[1] ~= 'pending' or r[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'dispatching', '1')
return 1
`);

/** Records the outcome once, by the claim holder. */
const SETTLE = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state', 'claim')
if r[1] ~= 'pending' or r[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'answer', ARGV[3], 'claim_until', '0')
return 1
`);

/** Removes a record whose operation was refused before any effect, so an honest retry can run. */
const DROP = new LuaScript(`
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
const SWEEP = new LuaScript(`
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
const REOPEN = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state')
if r[1] ~= 'unknown' then return {'moved'} end
local fence = redis.call('GET', KEYS[2]) or '0'
if ARGV[3] ~= '' and fence ~= ARGV[3] then return {'stale', fence} end
redis.call('HSET', KEYS[1], 'state', 'pending', 'claim', ARGV[1], 'claim_until', ARGV[2])
redis.call('HDEL', KEYS[1], 'dispatching')
return {'run', fence}
`);

/** Replaces a settled record's outcome (the reconciler learned what became of an unknown send). */
const RESETTLE = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'state')
if r[1] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'answer', ARGV[3])
return 1
`);

/** What the sweep found: the record settled by it, or why it was left alone. */
export type SweepOutcome = 'swept' | 'absent' | 'running' | Exclude<OperationState, 'pending'>;

export type Reopen =
  { kind: 'run'; claim: string; fence: number } | { kind: 'stale'; fence: number } | { kind: 'moved' };

export function newClaim(): string {
  return randomBytes(12).toString('hex');
}

/** The operation ledger in Redis (docs/contract.md "Idempotent mutations"). */
@Injectable()
export class OperationLedgerRepository extends RedisRepository {
  private recordKeys(sessionId: string, operationId: string): string[] {
    return [
      this.keys.operation(sessionId, operationId),
      this.keys.operations(sessionId),
      this.keys.fence(sessionId),
    ];
  }

  async admit(input: AdmitInput): Promise<Admission> {
    const claim = newClaim();
    const reply = (await ADMIT.run(this.redis, this.recordKeys(input.sessionId, input.operationId), [
      input.fingerprint,
      input.now,
      input.timestamp,
      claim,
      input.now + input.claimMs,
      input.capacity,
      input.maxNewAgeMs,
      input.expiresAt,
      input.expectedFence ?? '',
      input.operationId,
    ])) as [string, ...unknown[]];
    switch (reply[0]) {
      case 'admit':
        return { kind: 'admit', claim, fence: Number(reply[1]) };
      case 'replay':
        return { kind: 'replay', record: parseRecord(reply[1] as string[]) };
      case 'stale':
        return { kind: 'stale', fence: Number(reply[1]) };
      case 'expired':
        return { kind: 'expired' };
      case 'capacity':
        return { kind: 'capacity' };
      default:
        return { kind: 'conflict' };
    }
  }

  async read(sessionId: string, operationId: string): Promise<OperationRecord | null> {
    const fields = await this.redis.hgetall(this.keys.operation(sessionId, operationId));
    if (!fields.fp) return null;
    return parseRecord(Object.entries(fields).flat());
  }

  async takeover(
    sessionId: string,
    operationId: string,
    record: OperationRecord,
    now: number,
    claimMs: number,
    expectedFence?: number,
  ): Promise<Takeover> {
    const claim = newClaim();
    const reply = (await TAKEOVER.run(this.redis, this.recordKeys(sessionId, operationId), [
      record.claim,
      claim,
      now + claimMs,
      now,
      expectedFence ?? '',
      operationId,
    ])) as [string, string?];
    switch (reply[0]) {
      case 'run':
        return { kind: 'run', claim, fence: Number(reply[1]) };
      case 'settle':
        return { kind: 'settle', claim };
      case 'stale':
        return { kind: 'stale', fence: Number(reply[1]) };
      default:
        return { kind: 'moved' };
    }
  }

  async markDispatching(sessionId: string, operationId: string, claim: string): Promise<boolean> {
    return (await DISPATCHING.run(this.redis, [this.keys.operation(sessionId, operationId)], [claim])) === 1;
  }

  async settle(
    sessionId: string,
    operationId: string,
    claim: string,
    state: Exclude<OperationState, 'pending'>,
    answer: EdgeAgentResult,
  ): Promise<boolean> {
    const stored = await SETTLE.run(
      this.redis,
      [this.keys.operation(sessionId, operationId)],
      [claim, state, JSON.stringify(answer)],
    );
    return stored === 1;
  }

  async sweep(
    sessionId: string,
    operationId: string,
    now: number,
    answer: EdgeAgentResult,
  ): Promise<SweepOutcome> {
    const outcome = await SWEEP.run(
      this.redis,
      [this.keys.operation(sessionId, operationId)],
      [now, JSON.stringify(answer)],
    );
    return outcome as SweepOutcome;
  }

  async reopen(
    sessionId: string,
    operationId: string,
    now: number,
    claimMs: number,
    expectedFence?: number,
  ): Promise<Reopen> {
    const claim = newClaim();
    const reply = (await REOPEN.run(
      this.redis,
      [this.keys.operation(sessionId, operationId), this.keys.fence(sessionId)],
      [claim, now + claimMs, expectedFence ?? ''],
    )) as [string, string?];
    if (reply[0] === 'run') return { kind: 'run', claim, fence: Number(reply[1]) };
    if (reply[0] === 'stale') return { kind: 'stale', fence: Number(reply[1]) };
    return { kind: 'moved' };
  }

  async resettle(
    sessionId: string,
    operationId: string,
    from: Exclude<OperationState, 'pending'>,
    state: Exclude<OperationState, 'pending'>,
    answer: EdgeAgentResult,
  ): Promise<boolean> {
    const stored = await RESETTLE.run(
      this.redis,
      [this.keys.operation(sessionId, operationId)],
      [from, state, JSON.stringify(answer)],
    );
    return stored === 1;
  }

  /**
   * A marker that one replica (the first to set it) handles `operationId` for the next `ttlMs`:
   * the sweep and the reconciler use it so two rounds never journal the same settlement twice.
   */
  async mark(
    sessionId: string,
    operationId: string,
    purpose: 'sweep' | 'reconcile',
    ttlMs: number,
  ): Promise<boolean> {
    const set = await this.redis.set(
      this.keys.operationMark(sessionId, operationId, purpose),
      '1',
      'PX',
      ttlMs,
      'NX',
    );
    return set === 'OK';
  }

  /** Gives a marker up (the work it reserved was not done), so the next round may try again. */
  async unmark(sessionId: string, operationId: string, purpose: 'sweep' | 'reconcile'): Promise<void> {
    await this.redis.del(this.keys.operationMark(sessionId, operationId, purpose));
  }

  /** True for the one replica that runs the submission round of the next `ttlMs`. */
  async holdRound(ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.keys.submissionRound(), newClaim(), 'PX', ttlMs, 'NX')) === 'OK';
  }

  async drop(sessionId: string, operationId: string, claim: string): Promise<boolean> {
    const dropped = await DROP.run(
      this.redis,
      [this.keys.operation(sessionId, operationId), this.keys.operations(sessionId)],
      [claim, operationId],
    );
    return dropped === 1;
  }
}

function parseRecord(flat: string[]): OperationRecord {
  const fields = new Map<string, string>();
  for (let index = 0; index + 1 < flat.length; index += 2) fields.set(flat[index]!, flat[index + 1]!);
  const answer = fields.get('answer');
  return {
    fingerprint: fields.get('fp') ?? '',
    state: (fields.get('state') ?? 'pending') as OperationState,
    claim: fields.get('claim') ?? '',
    claimUntil: Number(fields.get('claim_until') ?? 0),
    dispatching: fields.get('dispatching') === '1',
    fence: Number(fields.get('fence') ?? 0),
    recordedAt: Number(fields.get('recorded') ?? 0),
    ...(answer ? { answer: JSON.parse(answer) as EdgeAgentResult } : {}),
  };
}
