import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EdgeAgentResult } from '#contracts';
import { RedisRepository } from '../common/redis-repository.js';
import {
  ADMIT,
  DISPATCHING,
  DROP,
  RENEW,
  REOPEN,
  RESETTLE,
  SETTLE,
  SWEEP,
  TAKEOVER,
} from './operation-ledger.scripts.js';

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

  /** Moves this replica's live claim on to `until`; false once the claim is not its own (or settled). */
  async renew(sessionId: string, operationId: string, claim: string, until: number): Promise<boolean> {
    return (await RENEW.run(this.redis, [this.keys.operation(sessionId, operationId)], [claim, until])) === 1;
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
