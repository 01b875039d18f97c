import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient } from '#persistence';
import {
  dropSessionContent,
  lockLiveSession,
  TOMBSTONE,
  type StoredSessionKey,
} from '../common/session-rows.js';
import type { StoredState } from '#contracts';

/** A stored session row with its ciphertext. */
export interface StoredSessionRow {
  deleted: boolean;
  revision: bigint;
  payload: Uint8Array | null;
  titleOverride: Uint8Array | null;
}

/** A session row written from a snapshot (content already encrypted). */
export interface SessionRowState {
  revision: bigint;
  payload: Uint8Array<ArrayBuffer>;
  summary: Uint8Array<ArrayBuffer>;
  running: boolean;
  closed: boolean;
  status: string;
}

export type ArchiveOutcome = 'no_access' | 'deleted' | { created: boolean };

@Injectable()
export class ArchiveRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  find(key: StoredSessionKey): Promise<StoredSessionRow | null> {
    return this.db.sessionHistory.findUnique({
      where: { ownerId_accessId_edgeId_sessionId: key },
      select: { deleted: true, revision: true, payload: true, titleOverride: true },
    });
  }

  /**
   * Saves the session row from the snapshot (insert-or-ignore, then update only a live row with
   * an older revision) and archives its window as a page (insert-or-ignore: first write wins),
   * in one transaction, so a page never exists without its live parent.
   */
  async archiveWindow(
    key: StoredSessionKey,
    state: SessionRowState,
    page: { window: number; payload: Uint8Array<ArrayBuffer> },
  ): Promise<ArchiveOutcome> {
    return this.db.$transaction(async (tx) => {
      const now = new Date();
      const row = await lockLiveSession(tx, key, { ...state, epoch: '', updatedAt: now, syncedAt: now });
      if (row === 'no_access' || row === null) return 'no_access';
      if (row.deleted) return 'deleted';
      if (!row.inserted && row.revision < state.revision) {
        await tx.sessionHistory.updateMany({
          where: { ...key, deleted: false },
          data: { ...state, updatedAt: now, syncedAt: now },
        });
      }
      const created = await tx.sessionHistoryPage.createMany({
        data: [{ ...key, window: page.window, revision: state.revision, payload: page.payload }],
        skipDuplicates: true,
      });
      return { created: created.count > 0 };
    });
  }

  /** Stores the override on a live row; returns the row as it was, or its state when not live. */
  async rename(
    key: StoredSessionKey,
    titleOverride: Uint8Array<ArrayBuffer>,
  ): Promise<StoredSessionRow | Exclude<StoredState, 'stored'>> {
    return this.db.$transaction(async (tx) => {
      const row = await lockLiveSession(tx, key, null);
      if (row === 'no_access' || row === null) return 'missing';
      if (row.deleted) return 'deleted';
      const updated = await tx.sessionHistory.update({
        where: { ownerId_accessId_edgeId_sessionId: key },
        data: { titleOverride, updatedAt: new Date() },
        select: { deleted: true, revision: true, payload: true, titleOverride: true },
      });
      return updated;
    });
  }

  /**
   * Tombstones the session (reference §2.3 delete, "tombstone first"): creates the tombstone if
   * no row exists yet, so a journal message still in flight cannot create the row afterwards;
   * nulls every content column; deletes archived pages and journal rows. Returns the state
   * before, or `no_access` when the access is gone (then nothing of it is stored anyway).
   */
  async tombstone(key: StoredSessionKey): Promise<StoredState | 'no_access'> {
    return this.db.$transaction(async (tx) => {
      const now = new Date();
      const gone = { ...TOMBSTONE, running: false, status: 'session_closed' };
      const row = await lockLiveSession(tx, key, { ...gone, revision: 0n, epoch: '', updatedAt: now });
      if (row === 'no_access' || row === null) return 'no_access';
      const before: StoredState = row.inserted ? 'missing' : row.deleted ? 'deleted' : 'stored';
      if (before === 'stored') {
        await tx.sessionHistory.update({
          where: { ownerId_accessId_edgeId_sessionId: key },
          data: { ...gone, updatedAt: now },
        });
      }
      await dropSessionContent(tx, key);
      return before;
    });
  }

  /** The archived page with the greatest window below `before`, or null. */
  findPageBefore(
    key: StoredSessionKey,
    before: number,
  ): Promise<{ window: number; payload: Uint8Array } | null> {
    return this.db.sessionHistoryPage.findFirst({
      where: { ...key, window: { lt: before } },
      orderBy: { window: 'desc' },
      select: { window: true, payload: true },
    });
  }

  /** The stream sequence of the session's last applied journal row; null: no sequenced row applied. */
  async appliedStreamSequence(key: StoredSessionKey): Promise<bigint | null> {
    const state = await this.db.journalState.findFirst({
      where: key,
      select: { lastStreamSequence: true },
    });
    return state?.lastStreamSequence ?? null;
  }

  /** True while the access is the owner's, on this edge, and the session is not a tombstone. */
  async isReadable(key: StoredSessionKey): Promise<boolean> {
    const rows = await this.db.$queryRaw<{ ok: number }[]>`
      SELECT 1 AS ok FROM session_histories h
      JOIN agent_accesses a ON a.id = h.access_id AND a.owner_id = h.owner_id AND a.edge_id = h.edge_id
      WHERE h.owner_id = ${key.ownerId} AND h.access_id = ${key.accessId}
        AND h.edge_id = ${key.edgeId} AND h.session_id = ${key.sessionId} AND NOT h.deleted`;
    return rows.length > 0;
  }
}
