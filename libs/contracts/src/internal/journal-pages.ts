// The structured journal as readers page it: the read side of journal-rows.ts.
import type { DispatchState, Submission } from '../operations.js';
import type { HistorySessionScope } from './stored-sessions.js';

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
  /**
   * What a reader standing at `{epoch, from}` reads next: the `after` page from there, exactly
   * as history answers it right after this commit, and the session scope it belongs to (a
   * session id alone is the edge's to choose, so a reader checks owner, access and edge before
   * it uses the page). Absent when the commit could not cut one; readers then read.
   */
  committed?: CommittedPage;
}

/** The page a commit notice carries (JournalNotice.committed). */
export interface CommittedPage {
  actor_id: string;
  access_id: string;
  edge_id: string;
  from: number;
  page: JournalPage;
}
