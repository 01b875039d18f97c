// Idempotent mutations (issue 4; the Orca journal's "Mutation envelope", reference orca §3): the
// optional envelope a client adds to a mutating edge_agent request, the fingerprint both sides
// compute, the operation outcome the reply carries and the submission rows a send writes ahead
// of its dispatch. Everything here is additive: a request without the envelope behaves exactly
// as before, and the fields below appear in a reply only when the request carried one.
import { createHash } from 'node:crypto';
import type { EdgeAgentRequest, EdgeAgentResult } from './edge-agent.js';

// The actions that accept the envelope are the action table's (actions.ts `operation`).
export { isOperationAction, OPERATION_ACTIONS, type OperationAction } from './actions.js';
import type { OperationAction } from './actions.js';

/**
 * `client_operation_id`: `<13-digit ms timestamp>-<32 lowercase hex>` (a client mints it as
 * `Date.now()` and a UUID without dashes). The timestamp bounds how long the id can be replayed.
 */
export const CLIENT_OPERATION_ID_PATTERN = /^\d{13}-[0-9a-f]{32}$/;
export const PAYLOAD_FINGERPRINT_PATTERN = /^[0-9a-f]{64}$/;

/**
 * The envelope fields of EdgeAgentRequest (all optional; id and fingerprint come together), and
 * the send's control flag `retry_unknown`. The router strips them before a request goes to an edge.
 */
export const ENVELOPE_FIELDS = [
  'client_operation_id',
  'expected_runtime_fence',
  'payload_fingerprint',
  'expected_revision',
  'retry_unknown',
] as const;

/** The wire method a fingerprint names, one per action (stable: clients hash it). */
export function operationMethod(action: OperationAction): string {
  return `edgeAgent.${action}`;
}

/**
 * The payload fields of each action that the fingerprint covers: what the effect is, never
 * routing or control fields (edge_id, access_id, the envelope itself).
 */
export function operationFields(action: OperationAction, request: EdgeAgentRequest): Record<string, unknown> {
  switch (action) {
    case 'send':
      return { text: request.text, attachments: request.attachments, skill_id: request.skill_id };
    case 'interrupt':
      return {};
    case 'approve':
      return {
        approval_id: request.approval_id,
        decision: request.decision,
        expected_revision: request.expected_revision,
      };
    case 'answer':
      return {
        input_id: request.input_id,
        answers: request.answers,
        expected_revision: request.expected_revision,
      };
    case 'model':
      return { model: request.model };
    case 'permissions':
      return { permission_mode: request.permission_mode };
  }
}

/**
 * Canonical JSON: object keys sorted at every depth (JS string order), keys whose value is
 * `undefined` dropped, arrays in order, no whitespace; a bare `undefined` is `null`.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 hex of the canonical JSON of `{method, sessionId, fields}`. */
export function operationFingerprint(action: OperationAction, request: EdgeAgentRequest): string {
  const payload = {
    method: operationMethod(action),
    sessionId: request.session_id ?? '',
    fields: operationFields(action, request),
  };
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
}

/**
 * The journal item of the user message a send produced: the last user message of the reply's
 * display window (`m:<window>:<index>`, the id history's reducer gives that message). The router
 * names an accepted submission with it; an edge names its dispatch record with it.
 */
export function sentMessageItemId(reply: Pick<EdgeAgentResult, 'messages' | 'window'>): string | undefined {
  const messages = reply.messages ?? [];
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    if (messages[index]?.role === 'user') return `m:${reply.window ?? 0}:${index}`;
  }
  return undefined;
}

/** The refusal codes of the Orca journal (reference orca §3.8), each returned where Orca returns it. */
export const OPERATION_REFUSAL_CODES = [
  'agent_session_checkpoint_stale',
  'agent_session_ownership_unknown',
  'agent_session_operation_conflict',
  'agent_session_operation_expired',
  'agent_session_operation_capacity',
  'agent_session_operation_invalid',
  'agent_session_operation_unknown',
  'agent_session_item_revision_stale',
  'agent_session_already_resolved',
  'execution_owner_reconciling',
] as const;
export type OperationRefusalCode = (typeof OPERATION_REFUSAL_CODES)[number];

/** A prompt's answer: who resolved it (the actor) and with what. */
export interface PromptResolution {
  resolved: boolean;
  /** approve: the decision; answer: the canonical JSON of the answers. */
  selected_option_id: string | null;
  resolved_by: string | null;
  resolved_at: number | null;
}

export interface OperationRefusal {
  code: OperationRefusalCode;
  message: string;
  /** checkpoint_stale: the fence the session is at, so the client can retry at once. */
  current_fence?: number;
  /** item_revision_stale, already_resolved: the revision the router holds and the winner's answer. */
  current_revision?: number;
  resolution?: PromptResolution;
}

export const DISPATCH_STATES = ['pending', 'accepted', 'rejected', 'unknown'] as const;
/**
 * `pending`: stored, dispatch not answered yet. `accepted`: the edge took it. `rejected`: a
 * first-hand refusal (the edge answered a status other than ok, or could not be reached at all).
 * `unknown`: the dispatch threw or timed out after it may have been delivered; never shown as
 * sent or failed, and never re-sent for the user.
 */
export type DispatchState = (typeof DISPATCH_STATES)[number];

/** A send's write-ahead submission as the journal stores it and replies carry it. */
export interface Submission {
  /** The send's client_operation_id. */
  client_message_id: string;
  fence: number;
  payload_fingerprint: string;
  dispatch_state: DispatchState;
  /** rejected: the status the edge answered; unknown: why delivery is unconfirmed. */
  reason?: string;
  /** accepted: the journal item of the user message the edge recorded, when it could be named. */
  item_id?: string;
  submitted_at: number;
  resolved_at?: number;
}

/** The `operation` field of a reply to a request that carried the envelope. */
export interface OperationOutcome {
  client_operation_id: string;
  /** True when the recorded outcome was returned instead of a new effect. */
  replayed: boolean;
  /** The session's runtime fence when the reply was made. */
  fence: number;
  /** send: the submission at its current state. */
  submission?: Submission;
  /** approve, answer: the prompt's resolution after the call. */
  resolution?: PromptResolution;
  /** Set when the operation was refused; the reply's status says how (docs/contract.md). */
  refusal?: OperationRefusal;
}
