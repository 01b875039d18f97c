// The audit record for history: a security contract (ids and outcome only), not a session message.

// The audited actions are the action table's (actions.ts `audited`).
export { AUDITED_ACTIONS, type AuditedAction } from '../actions.js';

/** The longest id an audit record keeps as decoded; a longer one is left out (docs/security.md "Audit"). */
export const AUDIT_ID_MAX_LENGTH = 64;
/** The `action` of a refused call whose body named no known action. */
export const AUDIT_UNDECODED_ACTION = 'invalid';

/**
 * api → history over JetStream (`<ns>.audit.edge-agent`): one mutating action, or any refused
 * call of an authenticated caller. Ids and outcome only: never a prompt, output, path, title or
 * credential.
 */
export interface AuditRecord {
  v: 1;
  /** 32 hex characters, unique per request; history stores each id once. */
  id: string;
  actor_id: string;
  /**
   * An audited action; for a refused call any action the body named, or `invalid` when it named
   * none that exists.
   */
  action: string;
  /**
   * For a refused call, the ids exactly as the body held them when they are storable (at most
   * AUDIT_ID_MAX_LENGTH characters, no control character), even when they are not valid ids
   * (`"0"`, `"null"`); an id that could not be decoded is left out, and an edge id is then `''`.
   */
  edge_id: string;
  access_id?: string;
  session_id?: string;
  /** The contract status of the reply, or `http_<code>` when the api refused the call. */
  status: string;
  /** status ∈ {ok, session_closed}. */
  success: boolean;
  /** W3C trace id of the request (from its `traceparent`), 32 lowercase hex. */
  trace_id?: string;
  /** ms since the epoch when the api answered. */
  occurred_at: number;
}
