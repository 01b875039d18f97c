// How one session's journal rows fold into what is stored, with no I/O: each row takes its turn
// in the subject's stream order against the journal state read under the session's locks, and
// the applied ones fold through the reducers (journal-reducer.ts via each row's plan, and
// submission-reducer.ts) into writes collapsed over the batch. The repository reads, calls
// `foldBatch`, and writes what it returns (journal-write.sql.ts); a single row is a batch of one.
import type { StoredSessionKey } from '../common/session-rows.js';
import type { StoredItemState } from './journal-reducer.js';
import type {
  BatchOutcome,
  BatchReads,
  BatchRow,
  BatchWrites,
  ItemRow,
  JournalRowWrite,
  JournalStateView,
  PageWrite,
  PlainBody,
  ReceiptWrite,
  RowPosition,
  SessionColumns,
  SessionSeal,
  SnapshotFields,
  SnapshotRecord,
  SubmissionRecord,
  SubmissionWrite,
} from './journal-records.js';
import { commitPage, type CommitPage } from './journal-commit-page.js';
import { reduceSubmission, type StoredSubmissionState } from './submission-reducer.js';

/** What a row's turn in its subject's stream order comes to (see `takeTurn`). */
export type Turn =
  | { kind: 'duplicate' }
  | { kind: 'out_of_order' }
  /** Applies: `rolled` when it opens a new epoch; `state` is the journal state after it. */
  | { kind: 'apply'; rolled: boolean; state: JournalStateView };

/**
 * A row's turn against the session's journal state: a message applied already (its stream
 * sequence at or below the state's) is a duplicate; one whose predecessor is not applied yet is
 * out of order, unless it opens an epoch (sequence 1, with no state or in a new epoch) or is
 * forced (its predecessor is given up on: a gap).
 */
export function takeTurn(current: JournalStateView | undefined, epoch: string, position: RowPosition): Turn {
  const lastApplied = current?.lastStreamSequence ?? 0n;
  if (current && position.streamSequence <= lastApplied) return { kind: 'duplicate' };
  const rolled = current !== undefined && current.epoch !== epoch;
  const opensEpoch = position.sequence === 1n && (current === undefined || rolled);
  if (position.prevStreamSequence !== lastApplied && !opensEpoch && !position.force) {
    return { kind: 'out_of_order' };
  }
  // The highest fence only grows, across epochs too (reference §1.2: a roll carries it over).
  const fence = Math.max(current?.fence ?? 0, position.fence ?? 0);
  return { kind: 'apply', rolled, state: { epoch, lastStreamSequence: position.streamSequence, fence } };
}

/** The session row's columns a snapshot row sets, with its sealed ciphertexts. */
export function sessionColumns(record: SnapshotFields, seal: SessionSeal, syncedAt: Date): SessionColumns {
  return {
    revision: record.revision,
    epoch: record.epoch,
    payload: seal.payload,
    summary: seal.summary,
    running: record.running,
    closed: record.closed,
    status: record.status,
    updatedAt: record.recordedAt,
    syncedAt,
  };
}

/** The outcome of each row, and the writes collapsed over the applied ones (null when none). */
export interface FoldResult {
  outcomes: BatchOutcome[];
  writes: BatchWrites | null;
  /** A row opened a new epoch: the stored items are deleted before the writes. */
  cleared: boolean;
  /**
   * Cuts the `after` page the commit leaves for a reader at the previous head (null when it
   * cannot be cut). Called once the transaction committed: no lock is held while it runs.
   */
  page: () => CommitPage | null;
}

/**
 * Folds one session's rows, in stream order, against what was read under its locks (`locked`:
 * the session row, null when there is none). A duplicate is 'unchanged'; a row whose predecessor
 * is neither stored nor applied earlier in the batch is 'out_of_order' and writes nothing, and
 * the rows after it still take their own turn. The session row moves to the highest applied
 * revision, never back.
 */
export function foldBatch(
  key: StoredSessionKey,
  rows: readonly BatchRow[],
  locked: { revision: bigint } | null,
  read: BatchReads,
  syncedAt: Date,
): FoldResult {
  const fold = new SessionFold(read);
  const outcomes = rows.map((row) => fold.apply(row));
  const writes = fold.writes(key, locked, syncedAt);
  return {
    outcomes,
    writes,
    cleared: writes !== null && fold.rolled,
    page: () => (writes === null ? null : fold.commitPage(writes, read)),
  };
}

/** An item's reduced state as a batch leaves it, collapsed over the batch's rows. */
type ItemWriteState = Omit<ItemRow, 'itemId'>;

/** One session's batch as it folds, row by row. */
class SessionFold {
  private current: JournalStateView | undefined;
  /** The reduced items, kept in memory over the batch; `inDb` are the ones stored already. */
  private items: Map<string, StoredItemState>;
  private inDb: ReadonlySet<string>;
  private readonly itemWrites = new Map<string, ItemWriteState>();
  /** The body of each item as last upserted, in the clear (the commit's page shows it). */
  private readonly plains = new Map<string, PlainBody>();
  /** A row opened a new epoch or was forced past a gap: a page read answers a reset, not a page. */
  private unpaged = false;
  private readonly submissions: Map<string, StoredSubmissionState>;
  private readonly submissionWrites = new Map<string, SubmissionWrite>();
  private readonly receipts: ReceiptWrite[] = [];
  private readonly journal: JournalRowWrite[] = [];
  private window: number | undefined;
  /** The window and the page of the last applied snapshot (stored, then this batch's). */
  private lastWindow: number | undefined;
  private lastPage: (() => PageWrite | undefined) | undefined;
  private readonly pages: PageWrite[] = [];
  private newest: SnapshotRecord | undefined;
  private head: { epoch: string; position: RowPosition } | undefined;
  /** A row of the batch opened a new epoch. */
  rolled = false;

  constructor(read: BatchReads) {
    this.current = read.state;
    this.items = read.items;
    this.inDb = new Set(read.items.keys());
    this.submissions = read.submissions;
    this.lastWindow = read.window;
    this.lastPage = () => read.storedPage;
  }

  apply(row: BatchRow): BatchOutcome {
    const position = row.kind === 'snapshot' ? row.record.structured : row.record.position;
    const turn = takeTurn(this.current, row.record.epoch, position);
    if (turn.kind === 'duplicate') return 'unchanged';
    if (turn.kind === 'out_of_order') return 'out_of_order';
    if (turn.rolled) this.startEpoch();
    if (turn.rolled || position.force) this.unpaged = true;
    this.current = turn.state;
    this.head = { epoch: row.record.epoch, position };
    if (row.kind === 'snapshot') {
      this.snapshot(row.record);
    } else {
      foldSubmission(row.record, this.submissions, this.submissionWrites, this.receipts);
      this.journal.push({
        epoch: row.record.epoch,
        revision: row.record.revision,
        payload: null,
        recordedAt: row.record.recordedAt,
        sequence: position.sequence,
        touched: [],
        clientMessageId: row.record.submission.client_message_id,
      });
    }
    return 'saved';
  }

  /** A new epoch starts the reduced items over (submissions and receipts outlive it). */
  private startEpoch(): void {
    this.rolled = true;
    this.items = new Map();
    this.inDb = new Set();
    this.itemWrites.clear();
    this.window = undefined;
  }

  private snapshot(record: SnapshotRecord): void {
    const { structured } = record;
    const plan = structured.plan(this.items);
    for (const item of plan.upserts) {
      const created = item.created
        ? { sequence: structured.sequence, ordinal: item.ordinal, observedAt: record.recordedAt }
        : undefined;
      const state = { revision: item.revision, body: item.body, digest: item.digest, deleted: false };
      this.setItem(item.itemId, state, created);
      this.plains.set(item.itemId, item.plain);
    }
    for (const tomb of plan.tombstones) {
      this.plains.delete(tomb.itemId);
      this.setItem(tomb.itemId, { revision: tomb.revision, body: null, digest: null, deleted: true });
    }
    this.window = structured.window;
    this.archive(record);
    if (!this.newest || record.revision > this.newest.revision) this.newest = record;
    this.journal.push({
      epoch: record.epoch,
      revision: record.revision,
      payload: record.journalPayload,
      recordedAt: record.recordedAt,
      sequence: structured.sequence,
      touched: [...plan.upserts.map((item) => item.itemId), ...plan.tombstones.map((tomb) => tomb.itemId)],
      clientMessageId: null,
    });
  }

  /**
   * A snapshot of a later window than the last applied one: that window is finished (the edge
   * rolls it only once its final state is journaled, and rows apply in journal order), so its
   * page is the last applied snapshot's. Windows are the edge's and outlive epochs.
   */
  private archive(record: SnapshotRecord): void {
    const window = record.structured.window;
    if (this.lastWindow !== undefined && window > this.lastWindow) {
      const page = this.lastPage?.();
      if (page && page.window === this.lastWindow) this.pages.push(page);
    }
    this.lastWindow = window;
    this.lastPage = () => record.sealPage();
  }

  /** An item's new state; its creation position is this row's when `created`, else kept. */
  private setItem(
    itemId: string,
    state: Omit<ItemWriteState, 'created'>,
    created?: ItemRow['created'],
  ): void {
    this.items.set(itemId, { revision: state.revision, digest: state.digest, deleted: state.deleted });
    const position = created ?? this.itemWrites.get(itemId)?.created;
    this.itemWrites.set(itemId, { ...state, ...(position ? { created: position } : {}) });
  }

  /** The page a reader at the head before the batch would read right after its commit. */
  commitPage(writes: BatchWrites, read: BatchReads): CommitPage | null {
    if (this.unpaged) return null;
    return commitPage({
      key: writes.key,
      epoch: writes.head.epoch,
      fence: writes.head.fence,
      rows: writes.journal,
      items: this.itemWrites,
      bodies: this.plains,
      submissions: this.submissionWrites,
      read,
    });
  }

  writes(key: StoredSessionKey, locked: { revision: bigint } | null, syncedAt: Date): BatchWrites | null {
    const { head, current, newest } = this;
    if (!head || !current) return null;
    const itemRows = [...this.itemWrites].map(([itemId, item]): ItemRow => ({ itemId, ...item }));
    return {
      key,
      // An item not stored yet was created by a row of this batch (so `created` is set).
      freshItems: itemRows.filter((item) => !this.inDb.has(item.itemId)),
      changedItems: itemRows.filter((item) => this.inDb.has(item.itemId)),
      // The session row moves to the highest applied revision, never back.
      session:
        newest && locked && locked.revision < newest.revision
          ? sessionColumns(newest, newest.sealSession(), syncedAt)
          : null,
      journal: this.journal,
      submissions: [...this.submissionWrites.values()],
      receipts: this.receipts,
      pages: this.pages,
      head: {
        epoch: head.epoch,
        sequence: head.position.sequence,
        streamSequence: head.position.streamSequence,
        fence: current.fence,
        rolled: this.rolled,
        window: this.window ?? null,
      },
    };
  }
}

/**
 * Folds one submission row through the submission reducer against the batch's view of the
 * stored submissions (`known`, updated here), collapsing the writes: a submission the batch
 * creates is inserted once, with the settled state of its latest applied row; a stored one is
 * updated once, to that state. An `accepted` settlement mints a receipt at this row's position.
 */
export function foldSubmission(
  record: SubmissionRecord,
  known: Map<string, StoredSubmissionState>,
  writes: Map<string, SubmissionWrite>,
  receipts: ReceiptWrite[],
): void {
  const { position, submission } = record;
  const id = submission.client_message_id;
  const stored = known.get(id);
  const transition = reduceSubmission(stored, submission);
  if (transition.kind === 'ignore') return;
  const settled = {
    dispatchState: submission.dispatch_state,
    reason: submission.reason ?? null,
    itemId: submission.item_id ?? null,
    resolvedAt: submission.resolved_at === undefined ? null : new Date(submission.resolved_at),
  };
  const before = writes.get(id);
  if (transition.kind === 'create') {
    writes.set(id, {
      kind: 'create',
      clientMessageId: id,
      epoch: record.epoch,
      sequence: position.sequence,
      fence: submission.fence,
      payloadFingerprint: submission.payload_fingerprint,
      submittedAt: new Date(submission.submitted_at),
      settled,
    });
  } else {
    writes.set(id, before ? { ...before, settled } : { kind: 'update', clientMessageId: id, settled });
    if (transition.receipt) {
      receipts.push({
        clientMessageId: id,
        itemId: submission.item_id ?? null,
        epoch: record.epoch,
        sequence: position.sequence,
        acceptedAt: settled.resolvedAt ?? record.recordedAt,
      });
    }
  }
  known.set(id, {
    dispatchState: submission.dispatch_state,
    payloadFingerprint:
      transition.kind === 'create' ? submission.payload_fingerprint : stored!.payloadFingerprint,
  });
}
