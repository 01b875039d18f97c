import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient, type Prisma } from '#persistence';
import { lockLiveSession, type StoredSessionKey } from '../common/session-rows.js';
import type { StoredItemState } from './journal-reducer.js';

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

/** The structured part of an entry: its position and how to fold it into the reduced state. */
export interface StructuredRecord {
  sequence: bigint;
  /** Stream sequence of this message and of the previous one on the subject. */
  streamSeq: bigint;
  prevStreamSeq: bigint;
  window: number;
  /** Apply even when the previous message was never applied (it is given up on: a gap). */
  force: boolean;
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

export type SaveOutcome =
  /** The access is gone (or never matched owner and edge): nothing stored. */
  | 'no_access'
  /** Stored: a new journal row, and the session row moved to this revision. */
  | 'saved'
  /** Nothing changed: a duplicate, an older revision, or a tombstoned session. */
  | 'unchanged';

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
}

@Injectable()
export class JournalRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  /**
   * Stores one entry idempotently, in one transaction: the session row is insert-or-ignore, then
   * locked; a tombstone stops everything (no journal row either, so deleted content never comes
   * back); otherwise the row is updated only when it holds an older revision and the journal row
   * is insert-or-ignore on (session, epoch, revision). Applying the same entry twice, or an older
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
            ...(record.structured ? { sequence: record.structured.sequence, touched: touched ?? [] } : {}),
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
    const rows = await tx.$queryRaw<StateRow[]>`
      SELECT epoch, last_stream_seq FROM journal_states WHERE session_id = ${key.sessionId} FOR UPDATE`;
    const current = rows[0];
    const lastApplied = current ? BigInt(current.last_stream_seq) : 0n;
    if (current && structured.streamSeq <= lastApplied) return null;
    const rolled = current !== undefined && current.epoch !== record.epoch;
    const opensEpoch = structured.sequence === 1n && (current === undefined || rolled);
    if (structured.prevStreamSeq !== lastApplied && !opensEpoch && !structured.force) {
      throw new JournalOutOfOrderError(key.sessionId);
    }
    if (rolled) await tx.journalItem.deleteMany({ where: { sessionId: key.sessionId } });

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
    const head = {
      epoch: record.epoch,
      headSequence: structured.sequence,
      lastStreamSeq: structured.streamSeq,
      window: structured.window,
      updatedAt: new Date(),
      ...(rolled ? { oldestSequence: 1n } : {}),
    };
    await tx.journalState.upsert({
      where: { sessionId: key.sessionId },
      create: { sessionId: key.sessionId, ...scope, ...head },
      update: head,
    });
    return [...plan.upserts.map((item) => item.itemId), ...plan.tombstones.map((tomb) => tomb.itemId)];
  }
}
