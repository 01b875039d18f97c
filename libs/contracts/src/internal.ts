// Messages between Tether's own services. Never exposed over HTTP.
import type { DispatchState, Submission } from './operations.js';
import type {
  AgentAccess,
  EdgeAgentRequest,
  EdgeAgentResult,
  Installation,
  ResumeState,
  SessionSummary,
} from './edge-agent.js';

/** Reply of any internal request that failed; the code says how the caller should map it. */
export const RPC_ERROR_CODES = [
  'invalid_request',
  'not_found',
  'connector_not_found',
  'access_not_found',
  'conflict',
  /** A per-actor bound (connectors, accesses) is reached; nothing was created. */
  'limit_reached',
  'unavailable',
  'internal',
] as const;
export type RpcErrorCode = (typeof RPC_ERROR_CODES)[number];
export interface RpcError {
  error: { code: RpcErrorCode; message: string };
}
export function isRpcError(value: unknown): value is RpcError {
  return typeof value === 'object' && value !== null && 'error' in value;
}

/** api → router: an action the api has authenticated and authorized. */
export interface RouterEdgeAgentRequest {
  actor_id: string;
  request: EdgeAgentRequest;
  /** The saved access's project when `request.access_id` is set. */
  project_root?: string;
}

/** edge → router: the state of one session after a change. Retried by the edge until acked. */
export interface SessionUpdate {
  edge_id: string;
  /** Proves the sender is the enrolled edge (see edge-credentials.ts). */
  edge_token: string;
  actor_id: string;
  access_id?: string;
  session_id: string;
  /** The edge's display revision; strictly increasing per session. */
  revision: number;
  /** The full snapshot as the edge would answer `snapshot`. */
  snapshot: EdgeAgentResult;
  /** Edge wall clock (ms since epoch) when the change happened, for latency measurements. */
  emitted_at: number;
}
export interface SessionUpdateAck {
  ok: true;
  /** The journal position the update was stored at (or was already stored at). */
  epoch: string;
  sequence: number;
  duplicate: boolean;
}

/** Stored in JetStream on `tether.session.<id>.journal`, consumed by history. */
export interface JournalEntry {
  v: 1;
  session_id: string;
  edge_id: string;
  actor_id: string;
  access_id?: string;
  epoch: string;
  revision: number;
  /**
   * The journal position inside `epoch`, assigned by the router (the single sequencer): 1 for an
   * epoch's first row, then +1 per row with no gaps and no reuse. Absent on entries written
   * before the structured journal (history then stores the snapshot only).
   */
  sequence?: number;
  /**
   * The stream sequence of the previous message on this session's journal subject (0 for the
   * first), i.e. the expected-last-subject-sequence the router published under. History applies
   * rows in this chain order even when JetStream redelivers them out of order.
   */
  prev_stream_seq?: number;
  /** Snapshot with live-only fields removed (approvals, input requests, catalogs). */
  snapshot: EdgeAgentResult;
  emitted_at: number;
  recorded_at: number;
  /** The session's runtime fence when the router stored the row (absent before fences existed). */
  fence?: number;
}

/**
 * A row the router itself writes on `tether.session.<id>.journal` (not an edge update): a send's
 * write-ahead submission (`dispatch_state: pending`, before the edge is asked) and its settlement
 * (`accepted`, `rejected` or `unknown`, after). Sequenced like every row. `revision` repeats the
 * head's edge revision (the row changes no snapshot), so a re-seed from it keeps the revision.
 * Message id: `<sid>:<epoch>:op:<client_message_id>:<dispatch_state>`.
 */
export interface JournalSubmissionEntry {
  v: 1;
  kind: 'submission';
  session_id: string;
  edge_id: string;
  actor_id: string;
  access_id?: string;
  epoch: string;
  revision: number;
  sequence: number;
  prev_stream_seq: number;
  fence: number;
  submission: Submission;
  recorded_at: number;
}

/**
 * A `JournalEntry` as it travels and rests on JetStream: the snapshot (the conversation) only
 * encrypted, as `sealed_snapshot` (base64 of the journal cipher's envelope, docs/security.md
 * "Content encryption"); every other field is ids, positions and times, readable by the
 * sequencer without the key.
 */
export type SealedJournalEntry = Omit<JournalEntry, 'snapshot'> & { sealed_snapshot: string };

/** Anything on a session's journal subject, as the code handles it (snapshot opened). */
export type JournalMessage = JournalEntry | JournalSubmissionEntry;
/** Anything on a session's journal subject, as it is stored (snapshot sealed). */
export type JournalWireMessage = SealedJournalEntry | JournalSubmissionEntry;
export function isSubmissionEntry<M extends JournalMessage | JournalWireMessage>(
  message: M,
): message is Extract<M, JournalSubmissionEntry> {
  return 'kind' in message && message.kind === 'submission';
}

/** Core NATS fan-out between router replicas: wake watchers of this session. */
export interface RevisionNotice {
  session_id: string;
  revision: number;
}

/** edge → routers every `interval_ms` (EDGE_HEARTBEAT_INTERVAL_MS by default). */
export interface EdgeHeartbeat {
  edge_id: string;
  edge_token: string;
  device: string;
  agent_kinds: string[];
  installations: Installation[];
  live_sessions: number;
  max_sessions: number;
  sent_at: number;
  /** How often this edge sends a heartbeat; absent from edges that predate it. */
  interval_ms?: number;
  /** The edge is shutting down: count it offline now rather than when its heartbeats stop. */
  leaving?: boolean;
}

export interface PresenceRequest {
  edge_ids: string[];
}
export interface PresenceReply {
  online: string[];
}

/** api → history: is the connector the actor's, and (if named) the access too? */
export interface AuthorizeRequest {
  actor_id: string;
  edge_id: string;
  access_id?: string;
}
export interface AuthorizeReply {
  ok: true;
  access?: AgentAccess;
}

export interface AccessInput {
  name: string;
  kind: string;
  edge_id: string;
  installation_id: string;
  project: string;
}
export interface AccessListRequest {
  actor_id: string;
  page: number;
  page_size: number;
}
export interface AccessListReply {
  items: AgentAccess[];
  total: number;
  page: number;
  page_size: number;
}
export interface AccessCreateRequest {
  actor_id: string;
  access: AccessInput;
}
export interface AccessUpdateRequest {
  actor_id: string;
  id: string;
  access: AccessInput;
}
export interface AccessDeleteRequest {
  actor_id: string;
  id: string;
}
export interface AccessReply {
  access: AgentAccess;
}

export interface ConnectorRecord {
  id: string;
  name: string;
  device?: string;
}
/** One page of the actor's connectors, oldest first; `after` is the last id of the page before. */
export interface ConnectorListRequest {
  actor_id: string;
  after?: string;
  /** 1..CONNECTORS_LIST_MAX; CONNECTORS_LIST_MAX when absent. */
  limit?: number;
}
export interface ConnectorListReply {
  connectors: ConnectorRecord[];
  /** Set when more connectors follow: the `after` of the next page. */
  next_after?: string;
}
export interface ConnectorEnrollRequest {
  actor_id: string;
  name: string;
  device?: string;
}
/** A connector's credentials, minted at enrollment and again at every rotation. */
export interface ConnectorEnrollReply {
  connector: ConnectorRecord;
  edge_token: string;
  /**
   * The edge's own NATS user as a `.creds` file (JWT and seed), when the deployment runs NATS
   * with decentralised auth (docs/security.md); absent on an open development NATS.
   */
  nats_creds?: string;
}
/** api → history: new credentials for one of the actor's connectors; the old ones stop working. */
export interface ConnectorRotateRequest {
  actor_id: string;
  edge_id: string;
}
/** api → history: delete one of the actor's connectors and revoke its credentials. */
export interface ConnectorDeleteRequest {
  actor_id: string;
  edge_id: string;
}
export interface ConnectorDeleteReply {
  connector: ConnectorRecord;
}
/** router → history: which token generation an edge holds now (connector_not_found: none). */
export interface EdgeCredentialRequest {
  edge_id: string;
}
export interface EdgeCredentialReply {
  generation: number;
}

/** router → history: one page of stored sessions for (actor, access, edge). */
export interface HistorySessionsRequest {
  actor_id: string;
  access_id: string;
  edge_id: string;
  page: number;
}
export interface HistorySessionsReply {
  sessions: SessionSummary[];
  total: number;
}

/** router → history: the key of one stored session (reference §4 "Manager durable history"). */
export interface HistorySessionScope {
  actor_id: string;
  access_id: string;
  edge_id: string;
  session_id: string;
}

/**
 * What history holds for a session: a readable row, a tombstone, or nothing. The router answers
 * differently for each (e.g. resume: `resume_unavailable` for none, `not_found` for a tombstone).
 */
export const STORED_STATES = ['stored', 'deleted', 'missing'] as const;
export type StoredState = (typeof STORED_STATES)[number];

/** router → history: the seed of a `resume`; `resume` is set only when `state` is `stored`. */
export type HistoryResumeSeedRequest = HistorySessionScope;
export interface HistoryResumeSeedReply {
  state: StoredState;
  resume?: ResumeState;
}

/**
 * router → history: the stored snapshot as an archived, read-only view (`status:"ok"`,
 * `archived`, `closed`, not `running`, title override applied). Set only when `state` is `stored`.
 */
export type HistorySnapshotRequest = HistorySessionScope;
export interface HistorySnapshotReply {
  state: StoredState;
  snapshot?: EdgeAgentResult;
}

/**
 * router → history before a windowed send: save the session row from `snapshot`, then archive
 * its current window as a page (first write wins). A tombstoned session is refused (not_found).
 */
export interface HistoryArchiveWindowRequest extends HistorySessionScope {
  snapshot: EdgeAgentResult;
}
export interface HistoryArchiveWindowReply {
  window: number;
  /** False when the page already existed (an earlier attempt of the same send stored it). */
  created: boolean;
}

/** router → history: store a title override; replies with the archived view like snapshot. */
export interface HistoryRenameRequest extends HistorySessionScope {
  title: string;
}
export type HistoryRenameReply = HistorySnapshotReply;

/** router → history: tombstone the session (payloads nulled, pages and journal rows deleted). */
export type HistoryDeleteRequest = HistorySessionScope;
export interface HistoryDeleteReply {
  /** The state before the call: `missing` means a tombstone was created for a session never saved. */
  state: StoredState;
}

/** router → history: the archived round with the greatest window below `before` (none: latest). */
export interface HistoryTranscriptRequest extends HistorySessionScope {
  before?: number;
}
export interface HistoryTranscriptReply {
  page?: EdgeAgentResult;
}

// The audited actions are the action table's (actions.ts `audited`).
export { AUDITED_ACTIONS, type AuditedAction } from './actions.js';

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

/** A position inside one journal epoch; `sequence` 0 is "before the first row". */
export interface JournalCursor {
  epoch: string;
  sequence: number;
}

export const JOURNAL_DIRECTIONS = ['tail', 'before', 'after'] as const;
export type JournalDirection = (typeof JOURNAL_DIRECTIONS)[number];

export const JOURNAL_RESET_REASONS = [
  'epoch_changed',
  'cursor_ahead',
  'cursor_compacted',
  'journal_gap',
] as const;
export type JournalResetReason = (typeof JOURNAL_RESET_REASONS)[number];

/**
 * One render item at its current revision. `sequence` is the row that created it (it orders the
 * list and never moves). An item too big for a page comes as a stand-in: `oversize`, no body.
 */
export interface JournalItem {
  itemId: string;
  revision: number;
  sequence: number;
  observedAt: number;
  body?: Record<string, unknown>;
  oversize?: true;
}

/**
 * A submission as pages and events carry it: Orca's `AgentJournalSubmission`, in camelCase
 * (reference orca §1.6).
 */
export interface JournalSubmissionView {
  clientMessageId: string;
  fence: number;
  payloadFingerprint: string;
  dispatchState: DispatchState;
  reason: string | null;
  /** accepted: the journal item of the sent message, when the router could name it. */
  itemId: string | null;
  /** The row that wrote the submission. */
  sequence: number;
  submittedAt: number;
  resolvedAt: number | null;
}

export interface JournalPage {
  sessionId: string;
  epoch: string;
  direction: JournalDirection;
  items: JournalItem[];
  removedItemIds: string[];
  /**
   * `after`: the submissions the page's rows wrote or settled, at their current state;
   * `tail`/`before`: those created by rows of the page's span (oldest item, or the epoch's start
   * when nothing older is left, up to the cursor or the head). At most 200.
   */
  submissions: JournalSubmissionView[];
  window: { oldest: JournalCursor | null; newest: JournalCursor | null; nextCursor: JournalCursor };
  hasOlder: boolean;
  hasNewer: boolean;
  /** The highest runtime fence the journal's rows carried (0 before fenced rows), for a writer's next mutation. */
  fence: number;
}

/** The bounded recovery state a reset carries: the newest items up to the page bounds. */
export interface JournalSnapshot {
  sessionId: string;
  /** The journal head. */
  cursor: JournalCursor;
  items: JournalItem[];
  /**
   * The newest 200 still open (`pending`, `unknown`) plus the newest 200 settled (`accepted`,
   * `rejected`), oldest submitted first.
   */
  submissions: JournalSubmissionView[];
  /** True when older items exist beyond this bounded snapshot (page them with `before`). */
  hasOlder: boolean;
  /** The highest runtime fence the journal's rows carried (0 before fenced rows). */
  fence: number;
}

/** api → history: one page of a session's structured journal, scoped by owner, access and edge. */
export interface HistoryJournalPageRequest extends HistorySessionScope {
  direction: JournalDirection;
  cursor?: JournalCursor;
  limit?: number;
}
export type HistoryJournalPageReply =
  { ok: true; page: JournalPage } | { ok: false; reset: JournalResetReason; snapshot: JournalSnapshot };

/**
 * router → history: open submissions across stored sessions, oldest submitted first, for the
 * router's crash-boundary sweep (`pending`) and its reconciler (`unknown`). Keyset paging by `after`.
 */
export interface HistoryOpenSubmissionsRequest {
  dispatch_state: 'pending' | 'unknown';
  /** Only those submitted at or after this time (ms). */
  submitted_from?: number;
  /** Only those submitted before this time (ms). */
  submitted_before?: number;
  /** The last one of the previous page. */
  after?: OpenSubmissionPosition;
  limit: number;
}
export interface OpenSubmissionPosition {
  submitted_at: number;
  session_id: string;
  client_message_id: string;
}
/** An open submission and the session it belongs to (enough to journal its settlement). */
export interface OpenSubmission {
  session_id: string;
  edge_id: string;
  actor_id: string;
  access_id: string;
  submission: Submission;
}
export interface HistoryOpenSubmissionsReply {
  submissions: OpenSubmission[];
}

/** history → subscribers (core NATS, not stored): a session's journal committed up to `head`. */
export interface JournalNotice {
  session_id: string;
  epoch: string;
  head: number;
}

/**
 * The lifecycle event types (docs/events.md). `session.deleted` is not caused by a row: it carries
 * the session's journal head at deletion.
 */
export const LIFECYCLE_EVENT_TYPES = [
  'session.started',
  'turn.started',
  'turn.completed',
  'approval.requested',
  'approval.resolved',
  'session.expired',
  'session.closed',
  'session.deleted',
] as const;
export type LifecycleEventType = (typeof LIFECYCLE_EVENT_TYPES)[number];

/**
 * Per-type data of a lifecycle event: ids, statuses and timings only, never prompts, output,
 * titles or paths (other services may follow sessions without seeing their content).
 */
export interface LifecycleEventData {
  /** turn.completed, session.expired: the snapshot's status (`ok`, `turn_failed`, `expired`, ...). */
  status?: string;
  /** turn.completed: the edge's timing of the turn, when observed. */
  turn_timing?: {
    dispatch_ms?: number | null;
    first_reply_ms?: number | null;
    finished_ms?: number | null;
  };
  /** approval.requested, approval.resolved. */
  approval_id?: string;
  /** approval.requested: the approval's kind as the agent names it (e.g. `command`), when given. */
  approval_kind?: string;
}

/**
 * Stored in JetStream on `tether.session.<id>.lifecycle` (docs/events.md), version 1. Published by
 * the router after the journal row `(epoch, sequence)` that caused it is stored; `id` is also the
 * JetStream message id, so a retried update never stores an event twice.
 */
export interface LifecycleEvent {
  v: 1;
  id: string;
  type: LifecycleEventType;
  session_id: string;
  edge_id: string;
  actor_id: string;
  access_id?: string;
  /** Milliseconds since the epoch at which the router recorded the journal row. */
  at: number;
  epoch: string;
  sequence: number;
  data: LifecycleEventData;
}
