// The pure rules of the mutation ledger (docs/contract.md "Idempotent mutations"; reference orca
// §3.3–§3.6): what an operation id says, how long its record lives, which contract status carries
// each refusal code, and how a send's dispatch settles. No I/O here, so each rule is unit-tested.
import {
  CLIENT_OPERATION_ID_PATTERN,
  ENVELOPE_FIELDS,
  Limits,
  result,
  type DispatchState,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type EdgeAgentStatus,
  type OperationRefusal,
  type OperationRefusalCode,
} from '#contracts';
import type { EdgeDelivery } from '../common/edge-rpc.client.js';

export type ParsedOperationId = { ok: true; timestamp: number } | { ok: false; reason: string };

/**
 * `<13-digit ms>-<32 hex>`, dated at most OPERATION_FUTURE_SKEW_MS ahead of `now`: a future-dated
 * id could look new again after its record expired. Checked before the ledger is asked: an id that
 * fails here can never have a record (the skew only shrinks as time passes).
 */
export function parseOperationId(id: string, now: number): ParsedOperationId {
  if (!CLIENT_OPERATION_ID_PATTERN.test(id)) {
    return { ok: false, reason: 'client_operation_id must be <13-digit ms timestamp>-<32 lowercase hex>' };
  }
  const timestamp = Number(id.slice(0, 13));
  if (timestamp > now + Limits.OPERATION_FUTURE_SKEW_MS) {
    return { ok: false, reason: 'client_operation_id is dated too far in the future' };
  }
  return { ok: true, timestamp };
}

/** An id older than this, never seen by the ledger, may no longer start an effect. */
export function isExpiredId(timestamp: number, now: number): boolean {
  return timestamp < now - Limits.OPERATION_MAX_NEW_AGE_MS;
}

/** The record outlives every moment its id could still be admitted as new. */
export function retentionExpiry(timestamp: number, recordedAt: number): number {
  return Math.max(recordedAt, timestamp) + Limits.OPERATION_RETENTION_MS;
}

/**
 * A refusal's reply status stays in the contract's set (old clients know only those); the Orca
 * refusal code (reference orca §3.8) travels in `operation.refusal.code`.
 */
export function refusalStatus(code: OperationRefusalCode): EdgeAgentStatus {
  switch (code) {
    case 'agent_session_operation_capacity':
      return 'busy';
    case 'agent_session_operation_unknown':
    case 'execution_owner_reconciling':
      return 'unavailable';
    case 'agent_session_ownership_unknown':
      return 'not_found';
    default:
      return 'invalid_request';
  }
}

export interface OperationContext {
  client_operation_id: string;
  fence: number;
}

/** The reply to a refused operation. */
export function refusalReply(
  context: OperationContext,
  refusal: OperationRefusal,
  sessionId?: string,
): EdgeAgentResult {
  return result(refusalStatus(refusal.code), {
    ...(sessionId ? { session_id: sessionId } : {}),
    operation: {
      client_operation_id: context.client_operation_id,
      replayed: false,
      fence: context.fence,
      refusal,
    },
  });
}

/** A recorded answer handed out again: the same reply, marked as a replay. */
export function asReplay(answer: EdgeAgentResult): EdgeAgentResult {
  if (!answer.operation) return answer;
  return { ...answer, operation: { ...answer.operation, replayed: true } };
}

/** The request as an edge sees it: an older edge's strict decoder would refuse the envelope. */
export function withoutEnvelope(request: EdgeAgentRequest): EdgeAgentRequest {
  if (!ENVELOPE_FIELDS.some((field) => request[field] !== undefined)) return request;
  const stripped = { ...request };
  for (const field of ENVELOPE_FIELDS) delete stripped[field];
  return stripped;
}

export interface Settlement {
  state: Exclude<DispatchState, 'pending'>;
  reason?: string;
}

/**
 * How a dispatched send settles (reference orca §1.6, §9.4): ok is `accepted`; an answer the edge gave
 * first-hand, or a call that never reached it, is `rejected` with the status as its reason; a
 * call that may have reached the edge without a readable answer is `unknown`, never `rejected`.
 */
export function settleDispatch(reply: EdgeAgentResult, delivery: EdgeDelivery | undefined): Settlement {
  if (reply.status === 'ok') return { state: 'accepted' };
  if (delivery === 'unconfirmed') return { state: 'unknown', reason: 'dispatch_unconfirmed' };
  return { state: 'rejected', reason: reply.status };
}

/**
 * What the ledger keeps of a reply to replay it: the reply itself, or (over the bound) its
 * identifying fields and the operation, so a few large snapshots cannot fill Redis.
 */
export function recordableAnswer(answer: EdgeAgentResult): EdgeAgentResult {
  if (JSON.stringify(answer).length <= OPERATION_ANSWER_MAX_CHARS) return answer;
  return result(answer.status, {
    ...(answer.session_id ? { session_id: answer.session_id } : {}),
    ...(answer.revision !== undefined ? { revision: answer.revision } : {}),
    ...(answer.operation ? { operation: answer.operation } : {}),
  });
}

/** Bound of a recorded reply (characters of its JSON). */
export const OPERATION_ANSWER_MAX_CHARS = 64 * 1024;
