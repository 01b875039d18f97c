// router → history calls on one stored session, all keyed by the same scope.
import type { EdgeAgentResult, ResumeState, SessionSummary } from '../edge-agent.js';

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
export interface HistoryResumeSeedRequest extends HistorySessionScope {
  /**
   * The JetStream sequence of the session's last journal row when the router asked: history
   * seeds only from a row that has applied it (bounded wait, then `unavailable`). A seed older
   * than the journal would restart the session at a revision the journal already holds, and the
   * journal would take its next updates for retries of rows it has.
   */
  stream_sequence?: number;
}
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
  /**
   * The JetStream sequence of the session's last journal row when the router asked: history
   * answers once it has applied that row (bounded wait), so a round the client already saw
   * finished is never skipped because its page is still in flight.
   */
  stream_sequence?: number;
}
export interface HistoryTranscriptReply {
  page?: EdgeAgentResult;
}
