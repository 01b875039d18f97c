import { Inject, Injectable } from '@nestjs/common';
import type { DispatchState, Submission } from '#contracts';
import { PRISMA, PrismaClient, type Prisma } from '#persistence';
import { lockLiveSession, type StoredSessionKey } from '../common/session-rows.js';
import type { StoredItemState } from './journal-reducer.js';
import { reduceSubmission, type StoredSubmissionState } from './submission-reducer.js';
import {
  clearItems,
  insertSession,
  lockAccessesAndSessions,
  lockSession,
  readSessions,
  writeBatches,
  type BatchReads,
  type BatchWrites,
  type ItemRow,
  type JournalRowWrite,
  type ReadRequest,
  type ReceiptWrite,
  type SessionLock,
  type SubmissionWrite,
} from './journal-write.sql.js';

/** One item write of a reduction, content already encrypted. */
export interface ItemWrite {
  itemId: string;
  revision: number;
  ordinal: number;
  created: boolean;
  body: Uint8Array<ArrayBuffer>;
  digest: string;
}

export interface ItemPlan {
  upserts: ItemWrite[];
  tombstones: { itemId: string; revision: number }[];
}

/** Where a sequenced row sits: in its epoch, and in its subject's stream. */
export interface RowPosition {
  sequence: bigint;
  /** Stream sequence of this message and of the previous one on the subject. */
  streamSeq: bigint;
  prevStreamSeq: bigint;
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

/** One journal entry, reduced to what is stored; content is already encrypted. */
export interface JournalRecord {
  key: StoredSessionKey;
  epoch: string;
  revision: bigint;
  /** Ciphertext of the stored snapshot for the session row. */
  payload: Uint8Array<ArrayBuffer>;
  /** Ciphertext of the same snapshot for the journal row (bound to its position). */
  journalPayload: Uint8Array<ArrayBuffer>;
  /** Ciphertext of the list summary (title, thread id, project). */
  summary: Uint8Array<ArrayBuffer>;
  running: boolean;
  closed: boolean;
  status: string;
  recordedAt: Date;
  structured?: StructuredRecord;
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

export type SaveOutcome =
  /** The access is gone (or never matched owner and edge): nothing stored. */
  | 'no_access'
  /** Stored: a new journal row, and the session row moved to this revision. */
  | 'saved'
  /** Nothing changed: a duplicate, an older revision, or a tombstoned session. */
  | 'unchanged';

/** One row of a session-batch: a snapshot row (always sequenced here) or a submission row. */
export type BatchRow =
  { kind: 'snapshot'; record: BatchSnapshotRecord } | { kind: 'submission'; record: SubmissionRecord };

/**
 * A snapshot row of a batch: the session row's ciphertexts are sealed only for the row that ends
 * up on the session row (the batch's newest), not for every row.
 */
export interface BatchSnapshotRecord extends Omit<JournalRecord, 'payload' | 'summary'> {
  structured: StructuredRecord;
  sealSession(): { payload: Uint8Array<ArrayBuffer>; summary: Uint8Array<ArrayBuffer> };
}

/** What became of one row of a session-batch. */
export type BatchOutcome = SaveOutcome | 'out_of_order';

/** An item's reduced state as a session-batch leaves it, collapsed over the batch's rows. */
interface ItemWriteState {
  revision: number;
  body: Uint8Array<ArrayBuffer> | null;
  digest: string | null;
  deleted: boolean;
  /** Creation position: set when a row of this batch created (or revived) the item. */
  created?: { sequence: bigint; ordinal: number; observedAt: Date };
}

/** The previous message of this session's subject is not applied yet; nothing was written. */
export class JournalOutOfOrderError extends Error {
  constructor(sessionId: string) {
    super(`Journal row of session ${sessionId} arrived before its predecessor.`);
    this.name = 'JournalOutOfOrderError';
  }
}

interface StateRow {
  epoch: string;
  last_stream_seq: bigint;
  fence: number;
}

/** This row's turn in the subject's order: whether it opened a new epoch, and the fence after it. */
interface Turn {
  rolled: boolean;
  fence: number;
}

@Injectable()
export class JournalRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  /**
   * Stores one entry idempotently, in one transaction: the session row is insert-or-ignore, then
   * locked; a tombstone stops everything (no journal row either, so deleted content never comes
   * back); otherwise the row is updated only when it holds an older revision and the journal row
   * is insert-or-ignore on its position (session, epoch, sequence), or on (session, epoch,
   * revision) for an unsequenced one. Applying the same entry twice, or an older
   * one after a newer one, changes nothing. A structured entry also folds into the reduced state,
   * strictly in the subject's stream order (see `applyStructured`).
   */
  async save(record: JournalRecord): Promise<SaveOutcome> {
    const { key } = record;
    return this.db.$transaction(async (tx) => {
      const state = {
        revision: record.revision,
        epoch: record.epoch,
        payload: record.payload,
        summary: record.summary,
        running: record.running,
        closed: record.closed,
        status: record.status,
        updatedAt: record.recordedAt,
        syncedAt: new Date(),
      };
      const row = await lockLiveSession(tx, key, { ...state, createdAt: record.recordedAt });
      if (row === 'no_access') return 'no_access';
      if (row === null || row.deleted) return 'unchanged';
      const touched = record.structured ? await this.applyStructured(tx, record, record.structured) : null;
      if (record.structured && touched === null) return 'unchanged';
      const updated =
        row.inserted || row.revision >= record.revision
          ? { count: row.inserted ? 1 : 0 }
          : await tx.sessionHistory.updateMany({ where: { ...key, deleted: false }, data: state });
      const journal = await tx.journalRow.createMany({
        data: [
          {
            sessionId: key.sessionId,
            epoch: record.epoch,
            revision: record.revision,
            ownerId: key.ownerId,
            accessId: key.accessId,
            edgeId: key.edgeId,
            payload: record.journalPayload,
            recordedAt: record.recordedAt,
            ...(record.structured
              ? { sequence: record.structured.sequence, touched: touched ?? [] }
              : { legacyRevision: record.revision }),
          },
        ],
        skipDuplicates: true,
      });
      return journal.count > 0 || updated.count > 0 ? 'saved' : 'unchanged';
    });
  }

  /**
   * Folds a structured entry into the reduced state. Rows apply in the subject's stream order: a
   * message already applied (its stream sequence at or below the state's) is a duplicate (null);
   * one whose predecessor is not applied yet throws JournalOutOfOrderError (the consumer retries
   * it later) unless it opens an epoch or is forced. A new epoch starts the reduced state over.
   * Returns the touched item ids.
   */
  private async applyStructured(
    tx: Prisma.TransactionClient,
    record: JournalRecord,
    structured: StructuredRecord,
  ): Promise<string[] | null> {
    const { key } = record;
    const order = await this.takeTurn(tx, key, record.epoch, structured);
    if (order === null) return null;

    const storedRows = await tx.journalItem.findMany({
      where: { sessionId: key.sessionId },
      select: { itemId: true, revision: true, bodyDigest: true, deleted: true },
    });
    const stored = new Map<string, StoredItemState>(
      storedRows.map((item) => [
        item.itemId,
        { revision: item.revision, digest: item.bodyDigest, deleted: item.deleted },
      ]),
    );
    const plan = structured.plan(stored);
    const scope = { ownerId: key.ownerId, accessId: key.accessId, edgeId: key.edgeId };
    const fresh = plan.upserts.filter((item) => !stored.has(item.itemId));
    if (fresh.length > 0) {
      await tx.journalItem.createMany({
        data: fresh.map((item) => ({
          sessionId: key.sessionId,
          itemId: item.itemId,
          ...scope,
          epoch: record.epoch,
          revision: item.revision,
          sequence: structured.sequence,
          ordinal: item.ordinal,
          observedAt: record.recordedAt,
          body: item.body,
          bodyDigest: item.digest,
        })),
      });
    }
    for (const item of plan.upserts) {
      if (!stored.has(item.itemId)) continue;
      await tx.journalItem.update({
        where: { sessionId_itemId: { sessionId: key.sessionId, itemId: item.itemId } },
        data: {
          revision: item.revision,
          body: item.body,
          bodyDigest: item.digest,
          deleted: false,
          // A tombstoned id that comes back is a new item at this position.
          ...(item.created
            ? { sequence: structured.sequence, ordinal: item.ordinal, observedAt: record.recordedAt }
            : {}),
        },
      });
    }
    for (const tomb of plan.tombstones) {
      await tx.journalItem.update({
        where: { sessionId_itemId: { sessionId: key.sessionId, itemId: tomb.itemId } },
        data: { revision: tomb.revision, body: null, bodyDigest: null, deleted: true },
      });
    }
    await this.moveHead(tx, key, record.epoch, structured, order, { window: structured.window });
    return [...plan.upserts.map((item) => item.itemId), ...plan.tombstones.map((tomb) => tomb.itemId)];
  }

  /**
   * Stores one submission row idempotently, in one transaction, in the same per-subject order as
   * snapshot rows: the access must still exist and the session must not be a tombstone (a row for
   * a session history never stored yet still applies: the chain must move on); then the journal
   * row (for `after` replay) and the reduced submission (reference §1.6, submission-reducer.ts).
   * An `accepted` settlement mints the durable receipt at this row's position. The session row
   * and its snapshot are never touched.
   */
  async saveSubmission(record: SubmissionRecord): Promise<SaveOutcome> {
    const { key, position, submission } = record;
    return this.db.$transaction(async (tx) => {
      const row = await lockLiveSession(tx, key, null);
      if (row === 'no_access') return 'no_access';
      if (row?.deleted) return 'unchanged';
      const order = await this.takeTurn(tx, key, record.epoch, position);
      if (order === null) return 'unchanged';
      const scope = { ownerId: key.ownerId, accessId: key.accessId, edgeId: key.edgeId };
      const where = {
        sessionId_clientMessageId: {
          sessionId: key.sessionId,
          clientMessageId: submission.client_message_id,
        },
      };
      const stored = await tx.journalSubmission.findUnique({
        where,
        select: { dispatchState: true, payloadFingerprint: true },
      });
      const transition = reduceSubmission(
        stored
          ? {
              dispatchState: stored.dispatchState as DispatchState,
              payloadFingerprint: stored.payloadFingerprint,
            }
          : undefined,
        submission,
      );
      const settled = {
        dispatchState: submission.dispatch_state,
        reason: submission.reason ?? null,
        itemId: submission.item_id ?? null,
        resolvedAt: submission.resolved_at === undefined ? null : new Date(submission.resolved_at),
      };
      if (transition.kind === 'create') {
        await tx.journalSubmission.create({
          data: {
            sessionId: key.sessionId,
            clientMessageId: submission.client_message_id,
            ...scope,
            epoch: record.epoch,
            sequence: position.sequence,
            fence: submission.fence,
            payloadFingerprint: submission.payload_fingerprint,
            submittedAt: new Date(submission.submitted_at),
            ...settled,
          },
        });
      } else if (transition.kind === 'update') {
        await tx.journalSubmission.update({ where, data: settled });
        if (transition.receipt) {
          await tx.journalReceipt.createMany({
            data: [
              {
                sessionId: key.sessionId,
                clientMessageId: submission.client_message_id,
                ...scope,
                itemId: submission.item_id ?? null,
                epoch: record.epoch,
                sequence: position.sequence,
                acceptedAt: settled.resolvedAt ?? record.recordedAt,
              },
            ],
            skipDuplicates: true,
          });
        }
      }
      await tx.journalRow.createMany({
        data: [
          {
            sessionId: key.sessionId,
            epoch: record.epoch,
            revision: record.revision,
            ...scope,
            payload: null,
            recordedAt: record.recordedAt,
            sequence: position.sequence,
            clientMessageId: submission.client_message_id,
          },
        ],
        skipDuplicates: true,
      });
      await this.moveHead(tx, key, record.epoch, position, order, {});
      return 'saved';
    });
  }

  /**
   * Stores the batches of several sessions (distinct session ids; each batch is consecutive rows
   * of one key, sorted by stream sequence) in ONE transaction, each with the same rules as
   * `save`/`saveSubmission` row by row: its access and session row are locked once, its journal
   * state once; each row takes its turn in memory (a duplicate is 'unchanged', a row whose
   * predecessor is neither stored nor earlier in its batch is 'out_of_order' and writes nothing,
   * the rows after it still take their own turn); its items and named submissions are read once
   * and every applied row folds through the one reducer (and the submission reducer) in order.
   * Then every batch's writes go out collapsed, all in ONE statement (journal-write.sql.ts).
   *
   * The round trips do not grow with the number of sessions or rows: lock (accesses and session
   * rows, in key order so two writers never wait on each other in a cycle), states and reads,
   * write, commit; a session's first batch adds its insert, an epoch roll one delete. A session
   * whose access is gone or whose row is a tombstone writes nothing. If any statement fails the
   * whole transaction rolls back and the caller retries (message by message).
   */
  async saveBatches(batches: readonly SessionBatch[]): Promise<BatchOutcome[][]> {
    const outcomes: BatchOutcome[][] = batches.map(() => []);
    if (batches.length === 0) return outcomes;
    if (new Set(batches.map((batch) => batch.key.sessionId)).size !== batches.length) {
      // The reads of one session must see its earlier writes: one batch per session per transaction.
      throw new Error('saveBatches takes one batch per session.');
    }
    const order = batches
      .map((_, index) => index)
      .sort((a, b) => compareKeys(batches[a]!.key, batches[b]!.key));
    return this.db.$transaction(async (tx) => {
      const locks = await lockAccessesAndSessions(
        tx,
        order.map((index) => batches[index]!.key),
      );
      const live: { index: number; lock: { deleted: boolean; revision: bigint } | null }[] = [];
      for (const [position, index] of order.entries()) {
        const { key, rows } = batches[index]!;
        let lock: SessionLock = locks[position] ?? null;
        if (lock === 'no_access') {
          outcomes[index] = rows.map((): BatchOutcome => 'no_access');
          continue;
        }
        const firstSnapshot = rows.find((row) => row.kind === 'snapshot');
        if (lock === null && firstSnapshot) {
          // Sealed only when the session row does not exist yet.
          const record = firstSnapshot.record;
          const inserted = await insertSession(tx, key, {
            ...batchSessionState(record),
            createdAt: record.recordedAt,
          });
          lock = inserted ? { deleted: false, revision: record.revision } : await lockSession(tx, key);
        }
        // A tombstone stops everything. A missing row (submissions only) still applies: the chain must move on.
        if (lock?.deleted) {
          outcomes[index] = rows.map((): BatchOutcome => 'unchanged');
          continue;
        }
        live.push({ index, lock });
      }
      if (live.length === 0) return outcomes;

      const requests = live.map(({ index }) => readRequest(batches[index]!));
      const reads = await readSessions(tx, requests, true);
      // Without a session row nothing else serializes the session's writers before its state
      // lock: its reads are redone now that the lock is held (see readSessions).
      const unguarded = live.flatMap((entry, position) => (entry.lock === null ? [position] : []));
      if (unguarded.length > 0) {
        const reread = await readSessions(
          tx,
          unguarded.map((position) => requests[position]!),
          false,
        );
        unguarded.forEach((position, at) => {
          reads[position] = { ...reread[at]!, state: reads[position]!.state };
        });
      }

      const writes: BatchWrites[] = [];
      const cleared: string[] = [];
      live.forEach(({ index, lock }, position) => {
        const { key, rows } = batches[index]!;
        const folded = foldBatch(key, rows, lock, reads[position]!);
        outcomes[index] = folded.outcomes;
        if (folded.writes) writes.push(folded.writes);
        if (folded.cleared) cleared.push(key.sessionId);
      });
      if (cleared.length > 0) await clearItems(tx, cleared);
      if (writes.length > 0) await writeBatches(tx, writes);
      return outcomes;
    });
  }

  /**
   * Takes this row's turn in the subject's stream order (holding the session's journal state
   * until commit): null when the message was applied already (its stream sequence at or below
   * the state's); JournalOutOfOrderError when its predecessor is not applied yet, unless it opens
   * an epoch or is forced. A new epoch starts the reduced items over.
   */
  private async takeTurn(
    tx: Prisma.TransactionClient,
    key: StoredSessionKey,
    epoch: string,
    position: RowPosition,
  ): Promise<Turn | null> {
    const rows = await tx.$queryRaw<StateRow[]>`
      SELECT epoch, last_stream_seq, fence FROM journal_states WHERE session_id = ${key.sessionId} FOR UPDATE`;
    const current = rows[0];
    const lastApplied = current ? BigInt(current.last_stream_seq) : 0n;
    if (current && position.streamSeq <= lastApplied) return null;
    const rolled = current !== undefined && current.epoch !== epoch;
    const opensEpoch = position.sequence === 1n && (current === undefined || rolled);
    if (position.prevStreamSeq !== lastApplied && !opensEpoch && !position.force) {
      throw new JournalOutOfOrderError(key.sessionId);
    }
    // Submissions and receipts are keyed by the client's id, not by a position: they outlive a roll.
    if (rolled) await tx.journalItem.deleteMany({ where: { sessionId: key.sessionId } });
    // The highest fence only grows, across epochs too (reference §1.2: a roll carries it over).
    return { rolled, fence: Math.max(current?.fence ?? 0, position.fence ?? 0) };
  }

  /** Moves the session's journal head to this row (a new epoch's floor starts at 1). */
  private async moveHead(
    tx: Prisma.TransactionClient,
    key: StoredSessionKey,
    epoch: string,
    position: RowPosition,
    turn: Turn,
    extra: { window?: number },
  ): Promise<void> {
    // One raw statement (an upsert the ORM would plan per call): a new epoch's floor starts at 1,
    // and a row without a window (a submission) keeps the stored one.
    const window = extra.window ?? null;
    await tx.$executeRaw`
      INSERT INTO journal_states (session_id, owner_id, access_id, edge_id, epoch, head_sequence,
        last_stream_seq, fence, updated_at, "window", oldest_sequence)
      VALUES (${key.sessionId}, ${key.ownerId}, ${key.accessId}, ${key.edgeId}, ${epoch},
        ${position.sequence}, ${position.streamSeq}, ${turn.fence}, ${new Date()}, COALESCE(${window}::int, 0), 1)
      ON CONFLICT (session_id) DO UPDATE SET
        epoch = EXCLUDED.epoch,
        head_sequence = EXCLUDED.head_sequence,
        last_stream_seq = EXCLUDED.last_stream_seq,
        fence = EXCLUDED.fence,
        updated_at = EXCLUDED.updated_at,
        "window" = COALESCE(${window}::int, journal_states."window"),
        oldest_sequence = CASE WHEN ${turn.rolled} THEN 1 ELSE journal_states.oldest_sequence END`;
  }
}

/** The session row's columns a snapshot row sets. */
function sessionState(record: JournalRecord) {
  return {
    revision: record.revision,
    epoch: record.epoch,
    payload: record.payload,
    summary: record.summary,
    running: record.running,
    closed: record.closed,
    status: record.status,
    updatedAt: record.recordedAt,
    syncedAt: new Date(),
  };
}

function batchSessionState(record: BatchSnapshotRecord) {
  return sessionState({ ...record, ...record.sealSession() });
}

/** One session's rows for `saveBatches`: consecutive rows of one key, sorted by stream sequence. */
export interface SessionBatch {
  key: StoredSessionKey;
  rows: readonly BatchRow[];
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

/**
 * Folds one session's rows, in order, against what was read under its locks: the outcome of each
 * row and the writes collapsed over the applied ones (null when none applied); `cleared` when a
 * row opened a new epoch (the stored items are deleted before the writes).
 */
function foldBatch(
  key: StoredSessionKey,
  rows: readonly BatchRow[],
  locked: { deleted: boolean; revision: bigint } | null,
  read: BatchReads,
): { outcomes: BatchOutcome[]; writes: BatchWrites | null; cleared: boolean } {
  let current = read.state;
  // The reduced items, kept in memory over the batch; `inDb` are the ones stored already.
  let items = read.items;
  let inDb = new Set(items.keys());
  const itemWrites = new Map<string, ItemWriteState>();
  let cleared = false;
  const submissions = read.submissions;
  const submissionWrites = new Map<string, SubmissionWrite>();
  const receipts: ReceiptWrite[] = [];

  const outcomes: BatchOutcome[] = [];
  const journal: JournalRowWrite[] = [];
  let rolledAny = false;
  let window: number | undefined;
  let newest: BatchSnapshotRecord | undefined;
  let head: { epoch: string; position: RowPosition } | undefined;
  for (const row of rows) {
    const record = row.record;
    const position = row.kind === 'snapshot' ? row.record.structured : row.record.position;
    const lastApplied = current?.lastStreamSeq ?? 0n;
    if (current && position.streamSeq <= lastApplied) {
      outcomes.push('unchanged');
      continue;
    }
    const rolled = current !== undefined && current.epoch !== record.epoch;
    const opensEpoch = position.sequence === 1n && (current === undefined || rolled);
    if (position.prevStreamSeq !== lastApplied && !opensEpoch && !position.force) {
      outcomes.push('out_of_order');
      continue;
    }
    if (rolled) {
      // A new epoch starts the reduced items over (submissions and receipts outlive it).
      rolledAny = true;
      cleared = true;
      items = new Map();
      inDb = new Set();
      itemWrites.clear();
      window = undefined;
    }
    current = {
      epoch: record.epoch,
      lastStreamSeq: position.streamSeq,
      fence: Math.max(current?.fence ?? 0, position.fence ?? 0),
    };
    head = { epoch: record.epoch, position };
    if (row.kind === 'snapshot') {
      const structured = row.record.structured;
      const plan = structured.plan(items);
      for (const item of plan.upserts) {
        items.set(item.itemId, { revision: item.revision, digest: item.digest, deleted: false });
        const before = itemWrites.get(item.itemId);
        const created = item.created
          ? { sequence: structured.sequence, ordinal: item.ordinal, observedAt: row.record.recordedAt }
          : before?.created;
        itemWrites.set(item.itemId, {
          revision: item.revision,
          body: item.body,
          digest: item.digest,
          deleted: false,
          ...(created ? { created } : {}),
        });
      }
      for (const tomb of plan.tombstones) {
        items.set(tomb.itemId, { revision: tomb.revision, digest: null, deleted: true });
        const before = itemWrites.get(tomb.itemId);
        itemWrites.set(tomb.itemId, {
          revision: tomb.revision,
          body: null,
          digest: null,
          deleted: true,
          ...(before?.created ? { created: before.created } : {}),
        });
      }
      window = structured.window;
      if (!newest || row.record.revision > newest.revision) newest = row.record;
      journal.push({
        epoch: record.epoch,
        revision: record.revision,
        payload: row.record.journalPayload,
        recordedAt: record.recordedAt,
        sequence: structured.sequence,
        touched: [...plan.upserts.map((item) => item.itemId), ...plan.tombstones.map((tomb) => tomb.itemId)],
        clientMessageId: null,
      });
    } else {
      foldSubmission(row.record, submissions, submissionWrites, receipts);
      journal.push({
        epoch: record.epoch,
        revision: record.revision,
        payload: null,
        recordedAt: record.recordedAt,
        sequence: row.record.position.sequence,
        touched: [],
        clientMessageId: row.record.submission.client_message_id,
      });
    }
    outcomes.push('saved');
  }
  if (!head || !current) return { outcomes, writes: null, cleared: false };

  const itemRows = [...itemWrites].map(([itemId, item]): ItemRow => ({ itemId, ...item }));
  return {
    outcomes,
    cleared,
    writes: {
      key,
      // An item not stored yet was created by a row of this batch (so `created` is set).
      freshItems: itemRows.filter((item) => !inDb.has(item.itemId)),
      changedItems: itemRows.filter((item) => inDb.has(item.itemId)),
      // The session row moves to the highest applied revision, never back.
      session: newest && locked && locked.revision < newest.revision ? batchSessionState(newest) : null,
      journal,
      submissions: [...submissionWrites.values()],
      receipts,
      head: {
        epoch: head.epoch,
        sequence: head.position.sequence,
        streamSeq: head.position.streamSeq,
        fence: current.fence,
        rolled: rolledAny,
        window: window ?? null,
      },
    },
  };
}

/**
 * Folds one submission row of a batch through the submission reducer against the batch's view
 * of the stored submissions (`known`, updated here), collapsing the writes: a submission the
 * batch creates is inserted once, with the settled state of its latest applied row; a stored
 * one is updated once, to that state. An `accepted` settlement mints a receipt at this row's
 * position.
 */
function foldSubmission(
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
