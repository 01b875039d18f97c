import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient } from '#persistence';
import type { StoredSessionKey } from '../common/session-rows.js';

/** Where a session's structured journal stands (the scope matched). */
export interface JournalHead {
  epoch: string;
  head: bigint;
  oldest: bigint;
}

/** One reduced item as stored: content still encrypted. */
export interface StoredItem {
  itemId: string;
  revision: number;
  sequence: bigint;
  ordinal: number;
  observedAt: Date;
  body: Uint8Array | null;
  deleted: boolean;
}

const ITEM_SELECT = {
  itemId: true,
  revision: true,
  sequence: true,
  ordinal: true,
  observedAt: true,
  body: true,
  deleted: true,
} as const;

/** Reads of the reduced journal state for pages; every read is scoped by owner, access and edge. */
@Injectable()
export class JournalPagesRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  /** The journal head of a live session in this scope, or null (unknown, foreign or deleted). */
  async head(key: StoredSessionKey): Promise<JournalHead | null> {
    const [state, session] = await Promise.all([
      this.db.journalState.findFirst({
        where: { sessionId: key.sessionId, ownerId: key.ownerId, accessId: key.accessId, edgeId: key.edgeId },
        select: { epoch: true, headSequence: true, oldestSequence: true },
      }),
      this.db.sessionHistory.findFirst({ where: { ...key, deleted: false }, select: { sessionId: true } }),
    ]);
    if (!state || !session) return null;
    return { epoch: state.epoch, head: state.headSequence, oldest: state.oldestSequence };
  }

  /**
   * Up to `take` live items created strictly before `below` (all when null), newest first by
   * creation position.
   */
  newestItems(key: StoredSessionKey, below: bigint | null, take: number): Promise<StoredItem[]> {
    return this.db.journalItem.findMany({
      where: {
        ...key,
        deleted: false,
        ...(below === null ? {} : { sequence: { lt: below } }),
      },
      orderBy: [{ sequence: 'desc' }, { ordinal: 'desc' }],
      take,
      select: ITEM_SELECT,
    });
  }

  /** Every live item one row created (a page never splits them). */
  itemsOfSequence(key: StoredSessionKey, sequence: bigint): Promise<StoredItem[]> {
    return this.db.journalItem.findMany({
      where: { ...key, deleted: false, sequence },
      orderBy: [{ ordinal: 'desc' }],
      select: ITEM_SELECT,
    });
  }

  /** True when a live item was created at or after `from`. */
  async hasItemsFrom(key: StoredSessionKey, from: bigint): Promise<boolean> {
    const item = await this.db.journalItem.findFirst({
      where: { ...key, deleted: false, sequence: { gte: from } },
      select: { itemId: true },
    });
    return item !== null;
  }

  /** Up to `take` journal rows of the epoch after `after`, oldest first: position and touched ids. */
  rowsAfter(
    key: StoredSessionKey,
    epoch: string,
    after: bigint,
    take: number,
  ): Promise<{ sequence: bigint | null; touched: string[] }[]> {
    return this.db.journalRow.findMany({
      where: { ...key, epoch, sequence: { gt: after } },
      orderBy: { sequence: 'asc' },
      take,
      select: { sequence: true, touched: true },
    });
  }

  /** The current state of the named items (live or tombstoned). */
  itemsById(key: StoredSessionKey, itemIds: string[]): Promise<StoredItem[]> {
    if (itemIds.length === 0) return Promise.resolve([]);
    return this.db.journalItem.findMany({
      where: { ...key, itemId: { in: itemIds } },
      select: ITEM_SELECT,
    });
  }
}
