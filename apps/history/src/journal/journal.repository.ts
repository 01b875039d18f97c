import { Inject, Injectable, Logger } from '@nestjs/common';
import { PRISMA, PrismaClient, type Prisma } from '#persistence';
import type { StoredSessionKey } from '../common/session-rows.js';
import type { CommitPage } from './journal-commit-page.js';
import { foldBatch, sessionColumns } from './journal-fold.js';
import type {
  BatchOutcome,
  BatchReads,
  BatchRow,
  BatchWrites,
  PageWrite,
  SaveOutcome,
  SessionSeal,
  SnapshotFields,
} from './journal-records.js';
import {
  clearItems,
  lockSessionsForWrite,
  readSessions,
  readStoredPayloads,
  writeBatches,
  type ReadRequest,
} from './journal-write.sql.js';

/** One session's rows for `saveBatches`: consecutive rows of one key, sorted by stream sequence. */
export interface SessionBatch {
  key: StoredSessionKey;
  rows: readonly BatchRow[];
  /** Seals the page of the stored session row's snapshot (its ciphertext); null: unreadable. */
  sealStoredPage(payload: Uint8Array<ArrayBuffer>): PageWrite | null;
}

/** A snapshot row stored before the router sequenced rows: no position, no turn in the chain. */
export interface UnsequencedRecord extends SnapshotFields, SessionSeal {
  /** Ciphertext of the snapshot for the journal row (bound to its revision). */
  journalPayload: Uint8Array<ArrayBuffer>;
}

/** One outcome list per batch, and the page each committed batch left (when one could be cut). */
export interface SavedBatches {
  outcomes: BatchOutcome[][];
  pages: CommitPage[];
}

/** A batch that writes: its place in the caller's list and its session row (null: none yet). */
interface LiveBatch {
  index: number;
  batch: SessionBatch;
  lock: { revision: bigint; inserted: boolean } | null;
}

@Injectable()
export class JournalRepository {
  private readonly log = new Logger(JournalRepository.name);

  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  /**
   * The one write path of the sequenced journal (a single row is a batch of one). Stores the
   * batches of several sessions (distinct session ids; each batch is consecutive rows of one key,
   * sorted by stream sequence) in ONE transaction: each session's access and session row are
   * locked once (a missing row is inserted from its first snapshot row), its journal state once;
   * its items and named submissions are read once and its rows fold in order (journal-fold.ts).
   * Then every batch's writes go out collapsed, all in ONE statement (journal-write.sql.ts).
   *
   * The round trips do not grow with the number of sessions or rows: lock (accesses and session
   * rows, in key order so two writers never wait on each other in a cycle), states and reads,
   * write, commit; a session's first batch adds its insert, an epoch roll one delete. A session
   * whose access is gone or whose row is a tombstone writes nothing. If any statement fails the
   * whole transaction rolls back and the caller retries (message by message). Each committed
   * batch's `after` page comes back too (journal-commit-page.ts), for the commit notice.
   */
  async saveBatches(batches: readonly SessionBatch[]): Promise<SavedBatches> {
    const outcomes: BatchOutcome[][] = batches.map(() => []);
    const cuts: (() => CommitPage | null)[] = [];
    if (batches.length === 0) return { outcomes, pages: [] };
    if (new Set(batches.map((batch) => batch.key.sessionId)).size !== batches.length) {
      // The reads of one session must see its earlier writes: one batch per session per transaction.
      throw new Error('saveBatches takes one batch per session.');
    }
    await this.db.$transaction(async (tx) => {
      const now = new Date();
      const live = await lockBatches(tx, batches, outcomes, now);
      if (live.length === 0) return;
      const reads = await readBatches(tx, live);
      const writes: BatchWrites[] = [];
      const cleared: string[] = [];
      live.forEach(({ index, batch, lock }, position) => {
        const folded = foldBatch(batch.key, batch.rows, lock, reads[position]!, now);
        outcomes[index] = folded.outcomes;
        if (folded.writes) writes.push(folded.writes);
        if (folded.cleared) cleared.push(batch.key.sessionId);
        cuts.push(folded.page);
      });
      if (cleared.length > 0) await clearItems(tx, cleared);
      if (writes.length > 0) await writeBatches(tx, writes);
    });
    return { outcomes, pages: this.cutPages(cuts) };
  }

  /**
   * The committed batches' pages, cut after the commit so no row lock waits on them. A page is
   * only a shortcut for readers: one that fails to cut is left out (they read), never the write.
   */
  private cutPages(cuts: readonly (() => CommitPage | null)[]): CommitPage[] {
    const pages: CommitPage[] = [];
    for (const cut of cuts) {
      try {
        const page = cut();
        if (page) pages.push(page);
      } catch (error) {
        this.log.warn(`Commit page not cut, readers will read: ${(error as Error).message}`);
      }
    }
    return pages;
  }

  /**
   * Stores one unsequenced snapshot row, idempotently. Kept apart from `saveBatches` because such
   * a row is not part of the sequenced journal: it takes no turn in the subject's order, folds
   * into no reduced state and moves no head, and its journal row is keyed by its revision
   * (`legacyRevision`) rather than a position; its outcome also depends on what the insert of
   * that row and the session row update actually changed, which the batch statement does not
   * report. It takes the same row locks; the session row moves only to a higher revision, and a
   * tombstone stores nothing.
   */
  async saveUnsequenced(record: UnsequencedRecord): Promise<SaveOutcome> {
    const { key } = record;
    return this.db.$transaction(async (tx) => {
      const state = sessionColumns(record, record, new Date());
      const create = () => ({ ...state, createdAt: record.recordedAt });
      const [row] = await lockSessionsForWrite(tx, [{ key, create }]);
      if (row === 'no_access') return 'no_access';
      if (!row || row.deleted) return 'unchanged';
      const moved =
        row.inserted ||
        (row.revision < record.revision &&
          (await tx.sessionHistory.updateMany({ where: { ...key, deleted: false }, data: state })).count > 0);
      const journal = await tx.journalRow.createMany({
        data: [
          {
            ...key,
            epoch: record.epoch,
            revision: record.revision,
            payload: record.journalPayload,
            recordedAt: record.recordedAt,
            legacyRevision: record.revision,
          },
        ],
        skipDuplicates: true,
      });
      return journal.count > 0 || moved ? 'saved' : 'unchanged';
    });
  }
}

/**
 * Locks every batch's access and session row, in one total key order, inserting a missing
 * session row from the batch's first snapshot row (sealed only then). A batch whose access is
 * gone ('no_access') or whose row is a tombstone ('unchanged') gets its outcomes here and writes
 * nothing; a missing row with submission rows only still applies (the chain must move on).
 */
async function lockBatches(
  tx: Prisma.TransactionClient,
  batches: readonly SessionBatch[],
  outcomes: BatchOutcome[][],
  now: Date,
): Promise<LiveBatch[]> {
  const order = batches
    .map((_, index) => index)
    .sort((a, b) => compareKeys(batches[a]!.key, batches[b]!.key));
  const targets = order.map((index) => {
    const { key, rows } = batches[index]!;
    const first = rows.find((row) => row.kind === 'snapshot')?.record;
    const create = first
      ? () => ({ ...sessionColumns(first, first.sealSession(), now), createdAt: first.recordedAt })
      : null;
    return { key, create };
  });
  const held = await lockSessionsForWrite(tx, targets);
  const live: LiveBatch[] = [];
  order.forEach((index, position) => {
    const lock = held[position] ?? null;
    const rows = batches[index]!.rows;
    if (lock === 'no_access') outcomes[index] = rows.map((): BatchOutcome => 'no_access');
    else if (lock?.deleted) outcomes[index] = rows.map((): BatchOutcome => 'unchanged');
    else live.push({ index, batch: batches[index]!, lock });
  });
  return live;
}

/**
 * Locks the journal states of the live batches and reads what their rows fold against. Without
 * a session row nothing else serializes the session's writers before its state lock: its reads
 * are redone now that the lock is held (see readSessions).
 */
async function readBatches(tx: Prisma.TransactionClient, live: readonly LiveBatch[]): Promise<BatchReads[]> {
  const requests = live.map(({ batch }) => readRequest(batch));
  const reads = await readSessions(tx, requests, true);
  const unguarded = live.flatMap((entry, position) => (entry.lock === null ? [position] : []));
  if (unguarded.length > 0) {
    const reread = await readSessions(
      tx,
      unguarded.map((position) => requests[position]!),
      false,
    );
    unguarded.forEach((position, at) => {
      const { state, window } = reads[position]!;
      reads[position] = { ...reread[at]!, state, ...(window === undefined ? {} : { window }) };
    });
  }
  await readStoredPages(tx, live, reads);
  return reads;
}

/**
 * The stored page of each batch that starts a later window than its session's last applied
 * snapshot (once a round, not once a row): the finished window is archived from the session
 * row when no row of the batch itself holds its final state.
 */
async function readStoredPages(
  tx: Prisma.TransactionClient,
  live: readonly LiveBatch[],
  reads: BatchReads[],
): Promise<void> {
  const rolling = live.flatMap((entry, position) => {
    const window = reads[position]!.window;
    const rolls = entry.batch.rows.some(
      (row) => row.kind === 'snapshot' && window !== undefined && row.record.structured.window > window,
    );
    return rolls && entry.lock !== null ? [position] : [];
  });
  if (rolling.length === 0) return;
  const payloads = await readStoredPayloads(
    tx,
    rolling.map((position) => live[position]!.batch.key),
  );
  rolling.forEach((position, at) => {
    const payload = payloads[at];
    const page = payload ? live[position]!.batch.sealStoredPage(payload) : null;
    if (page) reads[position] = { ...reads[position]!, storedPage: page };
  });
}

/** Keys in one total order (the order a multi-session writer takes their locks in). */
function compareKeys(a: StoredSessionKey, b: StoredSessionKey): number {
  const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return (
    order(a.ownerId, b.ownerId) ||
    order(a.accessId, b.accessId) ||
    (a.edgeId < b.edgeId ? -1 : a.edgeId > b.edgeId ? 1 : 0) ||
    order(a.sessionId, b.sessionId)
  );
}

/** What a session's batch reads: items when a snapshot row may apply, and the submissions it names. */
function readRequest(batch: SessionBatch): ReadRequest {
  return {
    sessionId: batch.key.sessionId,
    items: batch.rows.some((row) => row.kind === 'snapshot'),
    submissionIds: [
      ...new Set(
        batch.rows.flatMap((row) =>
          row.kind === 'submission' ? [row.record.submission.client_message_id] : [],
        ),
      ),
    ],
  };
}
