// The rows the router writes on a session's journal subject: the stream every view derives from.
import type { EdgeAgentResult } from '../edge-agent.js';
import type { Submission } from '../operations.js';

/** What every row on a journal subject names: its session, edge, owner, access, epoch, revision. */
export interface JournalRowHeader {
  v: 1;
  session_id: string;
  edge_id: string;
  actor_id: string;
  access_id?: string;
  epoch: string;
  revision: number;
}

/** Stored in JetStream on `tether.session.<id>.journal`, consumed by history. */
export interface JournalEntry extends JournalRowHeader {
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
export interface JournalSubmissionEntry extends JournalRowHeader {
  kind: 'submission';
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
