import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient } from '#persistence';
import { lockLiveSession, type StoredSessionKey } from '../common/session-rows.js';

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
}

export type SaveOutcome =
  /** The access is gone (or never matched owner and edge): nothing stored. */
  | 'no_access'
  /** Stored: a new journal row, and the session row moved to this revision. */
  | 'saved'
  /** Nothing changed: a duplicate, an older revision, or a tombstoned session. */
  | 'unchanged';

@Injectable()
export class JournalRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  /**
   * Stores one entry idempotently, in one transaction: the session row is insert-or-ignore, then
   * locked; a tombstone stops everything (no journal row either, so deleted content never comes
   * back); otherwise the row is updated only when it holds an older revision and the journal row
   * is insert-or-ignore on (session, epoch, revision). Applying the same entry twice, or an older
   * one after a newer one, changes nothing.
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
          },
        ],
        skipDuplicates: true,
      });
      return journal.count > 0 || updated.count > 0 ? 'saved' : 'unchanged';
    });
  }
}
