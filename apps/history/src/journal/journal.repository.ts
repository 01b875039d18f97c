import { Inject, Injectable } from '@nestjs/common';
import type { DispatchState, Submission } from '#contracts';
import { PRISMA, PrismaClient, type Prisma } from '#persistence';
import { lockLiveSession, type StoredSessionKey } from '../common/session-rows.js';
import type { StoredItemState } from './journal-reducer.js';
import { reduceSubmission, type StoredSubmissionState } from './submission-reducer.js';

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
   * Stores consecutive rows of ONE session (same key, sorted by stream sequence) in one
   * transaction, with the same rules as `save`/`saveSubmission` row by row: the access and the
   * session row are locked once, the journal state once; each row takes its turn in memory
   * (a duplicate is 'unchanged', a row whose predecessor is neither stored nor earlier in this
   * batch is 'out_of_order' and writes nothing, the rows after it still take their own turn);
   * the items are read once and every applied row folds through the one reducer in order; then
   * the writes go out collapsed: item inserts in one statement, one update per changed item, the
   * session row once (to the highest applied revision), the journal rows in one statement and the
   * head once. Nothing is written when no row applies.
   */
  async saveBatch(key: StoredSessionKey, rows: readonly BatchRow[]): Promise<BatchOutcome[]> {
    const firstSnapshot = rows.find((row) => row.kind === 'snapshot');
    return this.db.$transaction(async (tx) => {
      // Sealed only when the session row does not exist yet.
      const create = firstSnapshot
        ? () => ({ ...batchSessionState(firstSnapshot.record), createdAt: firstSnapshot.record.recordedAt })
        : null;
      const locked = await lockLiveSession(tx, key, create);
      if (locked === 'no_access') return rows.map((): BatchOutcome => 'no_access');
      // A tombstone stops everything. A missing row (submissions only) still applies: the chain must move on.
      if (locked?.deleted) return rows.map((): BatchOutcome => 'unchanged');
      const scope = { ownerId: key.ownerId, accessId: key.accessId, edgeId: key.edgeId };
      const states = await tx.$queryRaw<StateRow[]>`
        SELECT epoch, last_stream_seq, fence FROM journal_states WHERE session_id = ${key.sessionId} FOR UPDATE`;
      let current = states[0]
        ? { epoch: states[0].epoch, lastStreamSeq: BigInt(states[0].last_stream_seq), fence: states[0].fence }
        : undefined;

      // The reduced items: read once (only if a snapshot row applies), then kept in memory.
      let stored: Map<string, StoredItemState> | undefined;
      let inDb = new Set<string>();
      const writes = new Map<string, ItemWriteState>();
      let cleared = false;
      const loadItems = async (): Promise<Map<string, StoredItemState>> => {
        if (stored) return stored;
        const found = cleared
          ? []
          : await tx.journalItem.findMany({
              where: { sessionId: key.sessionId },
              select: { itemId: true, revision: true, bodyDigest: true, deleted: true },
            });
        inDb = new Set(found.map((item) => item.itemId));
        stored = new Map(
          found.map((item) => [
            item.itemId,
            { revision: item.revision, digest: item.bodyDigest, deleted: item.deleted },
          ]),
        );
        return stored;
      };
      const submissions = await this.loadSubmissions(tx, key, rows);

      const outcomes: BatchOutcome[] = [];
      const journal: Prisma.JournalRowCreateManyInput[] = [];
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
          stored = new Map();
          inDb = new Set();
          writes.clear();
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
          const items = await loadItems();
          const plan = structured.plan(items);
          for (const item of plan.upserts) {
            items.set(item.itemId, { revision: item.revision, digest: item.digest, deleted: false });
            const before = writes.get(item.itemId);
            const created = item.created
              ? { sequence: structured.sequence, ordinal: item.ordinal, observedAt: row.record.recordedAt }
              : before?.created;
            writes.set(item.itemId, {
              revision: item.revision,
              body: item.body,
              digest: item.digest,
              deleted: false,
              ...(created ? { created } : {}),
            });
          }
          for (const tomb of plan.tombstones) {
            items.set(tomb.itemId, { revision: tomb.revision, digest: null, deleted: true });
            const before = writes.get(tomb.itemId);
            writes.set(tomb.itemId, {
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
            sessionId: key.sessionId,
            epoch: record.epoch,
            revision: record.revision,
            ...scope,
            payload: row.record.journalPayload,
            recordedAt: record.recordedAt,
            sequence: structured.sequence,
            touched: [
              ...plan.upserts.map((item) => item.itemId),
              ...plan.tombstones.map((tomb) => tomb.itemId),
            ],
          });
        } else {
          await this.applySubmission(tx, row.record, submissions);
          journal.push({
            sessionId: key.sessionId,
            epoch: record.epoch,
            revision: record.revision,
            ...scope,
            payload: null,
            recordedAt: record.recordedAt,
            sequence: row.record.position.sequence,
            clientMessageId: row.record.submission.client_message_id,
          });
        }
        outcomes.push('saved');
      }
      if (!head || !current) return outcomes;

      if (cleared) await tx.journalItem.deleteMany({ where: { sessionId: key.sessionId } });
      const fresh = [...writes].filter(([itemId]) => !inDb.has(itemId));
      if (fresh.length > 0) {
        await tx.journalItem.createMany({
          data: fresh.map(([itemId, item]) => ({
            sessionId: key.sessionId,
            itemId,
            ...scope,
            epoch: head!.epoch,
            revision: item.revision,
            // An item not stored yet was created by a row of this batch.
            sequence: item.created!.sequence,
            ordinal: item.created!.ordinal,
            observedAt: item.created!.observedAt,
            body: item.body,
            bodyDigest: item.digest,
            deleted: item.deleted,
          })),
        });
      }
      for (const [itemId, item] of writes) {
        if (!inDb.has(itemId)) continue;
        await tx.journalItem.update({
          where: { sessionId_itemId: { sessionId: key.sessionId, itemId } },
          data: {
            revision: item.revision,
            body: item.body,
            bodyDigest: item.digest,
            deleted: item.deleted,
            // A tombstoned id that comes back is a new item at its new position.
            ...(item.created ? item.created : {}),
          },
        });
      }
      if (newest && locked && locked.revision < newest.revision) {
        await tx.sessionHistory.updateMany({
          where: { ...key, deleted: false },
          data: batchSessionState(newest),
        });
      }
      await tx.journalRow.createMany({ data: journal, skipDuplicates: true });
      await this.moveHead(
        tx,
        key,
        head.epoch,
        head.position,
        { rolled: rolledAny, fence: current.fence },
        window === undefined ? {} : { window },
      );
      return outcomes;
    });
  }

  /** The stored submissions a batch's submission rows name, read in one query. */
  private async loadSubmissions(
    tx: Prisma.TransactionClient,
    key: StoredSessionKey,
    rows: readonly BatchRow[],
  ): Promise<Map<string, StoredSubmissionState>> {
    const ids = [
      ...new Set(
        rows.flatMap((row) => (row.kind === 'submission' ? [row.record.submission.client_message_id] : [])),
      ),
    ];
    if (ids.length === 0) return new Map();
    const found = await tx.journalSubmission.findMany({
      where: { sessionId: key.sessionId, clientMessageId: { in: ids } },
      select: { clientMessageId: true, dispatchState: true, payloadFingerprint: true },
    });
    return new Map(
      found.map((item) => [
        item.clientMessageId,
        { dispatchState: item.dispatchState as DispatchState, payloadFingerprint: item.payloadFingerprint },
      ]),
    );
  }

  /**
   * Folds one submission row into the stored submission (submission-reducer.ts) and mints the
   * receipt of an `accepted` settlement; `known` is the batch's view of the stored submissions.
   */
  private async applySubmission(
    tx: Prisma.TransactionClient,
    record: SubmissionRecord,
    known: Map<string, StoredSubmissionState>,
  ): Promise<void> {
    const { key, position, submission } = record;
    const scope = { ownerId: key.ownerId, accessId: key.accessId, edgeId: key.edgeId };
    const where = {
      sessionId_clientMessageId: { sessionId: key.sessionId, clientMessageId: submission.client_message_id },
    };
    const stored = known.get(submission.client_message_id);
    const transition = reduceSubmission(stored, submission);
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
    if (transition.kind !== 'ignore') {
      known.set(submission.client_message_id, {
        dispatchState: submission.dispatch_state,
        payloadFingerprint:
          transition.kind === 'create' ? submission.payload_fingerprint : stored!.payloadFingerprint,
      });
    }
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
