// The shapes of the journal write path, types only: what the service hands the repository (rows
// of a session, content already encrypted), what a batch reads under its locks, and what the
// fold (journal-fold.ts) leaves for the statements (journal-write.sql.ts) to write.
import type { Submission } from '#contracts';
import type { StoredSessionKey } from '../common/session-rows.js';
import type { RenderBody, StoredItemState } from './journal-reducer.js';
import type { StoredSubmission } from '../journal-pages/journal-pages.sql.js';
import type { StoredSubmissionState } from './submission-reducer.js';

/** One item write of a reduction, content already encrypted. */
export interface ItemWrite {
  itemId: string;
  revision: number;
  ordinal: number;
  created: boolean;
  body: Uint8Array<ArrayBuffer>;
  /** The plaintext of `body`, kept in memory for the commit's page only. */
  plain: PlainBody;
  digest: string;
}

/** An item's body in the clear, and the byte length of its JSON text (what `body` encrypts). */
export interface PlainBody {
  value: RenderBody;
  bytes: number;
}

export interface ItemPlan {
  upserts: ItemWrite[];
  tombstones: { itemId: string; revision: number }[];
}

/** Where a sequenced row sits: in its epoch, and in its subject's stream. */
export interface RowPosition {
  sequence: bigint;
  /** Stream sequence of this message and of the previous one on the subject. */
  streamSequence: bigint;
  prevStreamSequence: bigint;
  /** Apply even when the previous message was never applied (it is given up on: a gap). */
  force: boolean;
  /** The runtime fence the row carries (absent on rows written before fences existed). */
  fence?: number;
}

/** The structured part of an entry: its position and how to fold it into the reduced state. */
export interface StructuredRecord extends RowPosition {
  window: number;
  /** Runs the reducer against the stored item state (inside the transaction). */
  plan(stored: ReadonlyMap<string, StoredItemState>): ItemPlan;
}

/** What every snapshot row states about its session, besides ciphertexts. */
export interface SnapshotFields {
  key: StoredSessionKey;
  epoch: string;
  revision: bigint;
  running: boolean;
  closed: boolean;
  status: string;
  recordedAt: Date;
}

/** The session row's own ciphertexts: the stored snapshot and the list summary. */
export interface SessionSeal {
  payload: Uint8Array<ArrayBuffer>;
  /** Ciphertext of the list summary (title, thread id, project). */
  summary: Uint8Array<ArrayBuffer>;
}

/**
 * A sequenced snapshot row. The session row's ciphertexts are sealed only for the row that ends
 * up on the session row (the batch's newest, or the first when the row is missing), not for every
 * row.
 */
export interface SnapshotRecord extends SnapshotFields {
  /** Ciphertext of the snapshot for the journal row (bound to its position). */
  journalPayload: Uint8Array<ArrayBuffer>;
  structured: StructuredRecord;
  sealSession(): SessionSeal;
  /** The archived page of its window, as this snapshot leaves it (sealed only when archived). */
  sealPage(): PageWrite;
}

/** One archived window (a finished round): its final state, sealed for the transcript. */
export interface PageWrite {
  window: number;
  revision: bigint;
  payload: Uint8Array<ArrayBuffer>;
}

/** A router-written submission row (it changes no snapshot and no session row). */
export interface SubmissionRecord {
  key: StoredSessionKey;
  epoch: string;
  /** The head's edge revision, repeated. */
  revision: bigint;
  recordedAt: Date;
  position: RowPosition;
  submission: Submission;
}

/** One row of a session-batch: a snapshot row or a submission row, both sequenced. */
export type BatchRow =
  { kind: 'snapshot'; record: SnapshotRecord } | { kind: 'submission'; record: SubmissionRecord };

export type SaveOutcome =
  /** The access is gone (or never matched owner and edge): nothing stored. */
  | 'no_access'
  /** Stored: a new journal row, and the session row moved to this revision. */
  | 'saved'
  /** Nothing changed: a duplicate, an older revision, or a tombstoned session. */
  | 'unchanged';

/** What became of one row of a session-batch ('out_of_order': its predecessor is not applied). */
export type BatchOutcome = SaveOutcome | 'out_of_order';

/** The session row's columns a snapshot row sets. */
export interface SessionColumns extends SessionSeal {
  revision: bigint;
  epoch: string;
  running: boolean;
  closed: boolean;
  status: string;
  updatedAt: Date;
  syncedAt: Date;
}

/** The session's journal state, as a batch starts from it. */
export interface JournalStateView {
  epoch: string;
  lastStreamSequence: bigint;
  fence: number;
}

/** What a session's batch reads before it folds its rows: the state (locked), items and submissions. */
export interface BatchReads {
  state: JournalStateView | undefined;
  /** The display window of the last applied snapshot, when the session has a journal state. */
  window?: number;
  /**
   * The page of that window as the stored session row leaves it: read only when a row of the
   * batch starts a later window, so the finished one is archived (see SessionFold.archive).
   */
  storedPage?: PageWrite;
  items: Map<string, StoredItemState>;
  /** Where each stored item was created: its row, its place in that row and when. */
  positions: Map<string, ItemCreation>;
  submissions: Map<string, StoredSubmissionState>;
  /** The same submissions in full (the commit's page shows a settled one at its new state). */
  storedSubmissions: Map<string, StoredSubmission>;
}

/** Where an item was created: the row, its place among that row's new items, and when. */
export interface ItemCreation {
  sequence: bigint;
  ordinal: number;
  /** Milliseconds since the epoch. */
  observedAt: number;
}

/** An item as a batch leaves it. `created` is set when a row of the batch created (or revived) it. */
export interface ItemRow {
  itemId: string;
  revision: number;
  body: Uint8Array<ArrayBuffer> | null;
  digest: string | null;
  deleted: boolean;
  created?: { sequence: bigint; ordinal: number; observedAt: Date };
}

/** One journal row to insert (insert-or-ignore on its position). */
export interface JournalRowWrite {
  epoch: string;
  revision: bigint;
  payload: Uint8Array<ArrayBuffer> | null;
  recordedAt: Date;
  sequence: bigint;
  touched: string[];
  clientMessageId: string | null;
}

/** The settled part of a submission, as its latest applied row states it. */
export interface SubmissionSettled {
  dispatchState: string;
  reason: string | null;
  itemId: string | null;
  resolvedAt: Date | null;
}

/** A submission as a batch leaves it: created by a row of the batch, or updated. */
export type SubmissionWrite =
  | {
      kind: 'create';
      clientMessageId: string;
      epoch: string;
      sequence: bigint;
      fence: number;
      payloadFingerprint: string;
      submittedAt: Date;
      settled: SubmissionSettled;
    }
  | { kind: 'update'; clientMessageId: string; settled: SubmissionSettled };

export interface ReceiptWrite {
  clientMessageId: string;
  itemId: string | null;
  epoch: string;
  sequence: bigint;
  acceptedAt: Date;
}

/** The journal head after the batch. */
export interface HeadWrite {
  epoch: string;
  sequence: bigint;
  streamSequence: bigint;
  fence: number;
  rolled: boolean;
  /** The display window of the batch's last applied snapshot; null keeps the stored one. */
  window: number | null;
}

/** Everything one session's batch writes, collapsed over its rows. */
export interface BatchWrites {
  key: StoredSessionKey;
  /** Items not stored yet (inserted) and stored ones (updated). */
  freshItems: ItemRow[];
  changedItems: ItemRow[];
  /** The session row's new columns, when the batch moves it to a higher revision. */
  session: SessionColumns | null;
  journal: JournalRowWrite[];
  submissions: SubmissionWrite[];
  receipts: ReceiptWrite[];
  /** Windows the batch finished, archived (first write wins). */
  pages: PageWrite[];
  head: HeadWrite;
}
