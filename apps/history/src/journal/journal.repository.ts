import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, Prisma, PrismaClient } from '#persistence';

/** One journal entry, reduced to what is stored. */
export interface JournalRecord {
  ownerId: string;
  accessId: string;
  edgeId: bigint;
  sessionId: string;
  epoch: string;
  revision: bigint;
  /** The snapshot with live-only fields already removed. */
  payload: Record<string, unknown>;
  title: string;
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
   * Stores one entry idempotently, in one transaction: the journal row is insert-or-ignore on
   * (session, epoch, revision); the session row is insert-or-ignore, then updated only when it
   * is not a tombstone and holds an older revision. Applying the same entry twice, or an older
   * one after a newer one, changes nothing.
   */
  async save(record: JournalRecord): Promise<SaveOutcome> {
    const payload = record.payload as Prisma.InputJsonObject;
    return this.db.$transaction(async (tx) => {
      // FOR SHARE holds the access row until commit: a concurrent delete (which deletes the
      // row before tombstoning its sessions) waits for this save or makes it see no access.
      const access = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM agent_accesses
        WHERE id = ${record.accessId} AND owner_id = ${record.ownerId} AND edge_id = ${record.edgeId}
        FOR SHARE`;
      if (access.length === 0) return 'no_access';

      const journal = await tx.journalRow.createMany({
        data: [
          {
            sessionId: record.sessionId,
            epoch: record.epoch,
            revision: record.revision,
            ownerId: record.ownerId,
            accessId: record.accessId,
            edgeId: record.edgeId,
            payload,
            recordedAt: record.recordedAt,
          },
        ],
        skipDuplicates: true,
      });

      const key = {
        ownerId: record.ownerId,
        accessId: record.accessId,
        edgeId: record.edgeId,
        sessionId: record.sessionId,
      };
      const now = new Date();
      const state = {
        revision: record.revision,
        epoch: record.epoch,
        payload,
        title: record.title,
        running: record.running,
        closed: record.closed,
        status: record.status,
        updatedAt: record.recordedAt,
        syncedAt: now,
      };
      const inserted = await tx.sessionHistory.createMany({
        data: [{ ...key, ...state, createdAt: record.recordedAt }],
        skipDuplicates: true,
      });
      const updated =
        inserted.count > 0
          ? inserted
          : await tx.sessionHistory.updateMany({
              where: { ...key, deleted: false, revision: { lt: record.revision } },
              data: state,
            });
      return journal.count > 0 || updated.count > 0 ? 'saved' : 'unchanged';
    });
  }
}
