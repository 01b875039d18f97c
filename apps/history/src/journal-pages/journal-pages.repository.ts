import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient } from '#persistence';
import type { StoredSessionKey } from '../common/session-rows.js';
import {
  readAfter,
  readHasItemsFrom,
  readHead,
  readItemsOfSequence,
  readNewestItems,
  readRecoverySubmissions,
  readSubmissionsCreatedIn,
  type AfterRead,
  type JournalHead,
  type RowRange,
  type StoredItem,
  type StoredSubmission,
} from './journal-pages.sql.js';

export type { AfterRead, JournalHead, RowAfter, StoredItem, StoredSubmission } from './journal-pages.sql.js';

/** Dispatch states that are final answers; the others may still change. */
const SETTLED_STATES = ['accepted', 'rejected'];

/**
 * Reads of the reduced journal state for pages; every read is scoped by owner, access and edge.
 * The statements are raw SQL (journal-pages.sql.ts): a page read skips the ORM's query compiler.
 */
@Injectable()
export class JournalPagesRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  /** The journal head of a live session in this scope, or null (unknown, foreign or deleted). */
  head(key: StoredSessionKey): Promise<JournalHead | null> {
    return readHead(this.db, key);
  }

  /**
   * An `after` page's reads in one round trip: the head, up to `take` rows of the cursor's epoch
   * after it (none when the cursor fails the resume checks), the items they touched and the
   * submissions they wrote. Null when the session is unknown, foreign or deleted.
   */
  after(
    key: StoredSessionKey,
    cursor: { epoch: string; sequence: bigint },
    take: number,
  ): Promise<AfterRead | null> {
    return readAfter(this.db, key, cursor, take);
  }

  /**
   * Up to `take` live items created strictly before `below` (all when null), newest first by
   * creation position.
   */
  newestItems(key: StoredSessionKey, below: bigint | null, take: number): Promise<StoredItem[]> {
    return readNewestItems(this.db, key, below, take);
  }

  /** Every live item one row created (a page never splits them). */
  itemsOfSequence(key: StoredSessionKey, sequence: bigint): Promise<StoredItem[]> {
    return readItemsOfSequence(this.db, key, sequence);
  }

  /** True when a live item was created at or after `from`. */
  hasItemsFrom(key: StoredSessionKey, from: bigint): Promise<boolean> {
    return readHasItemsFrom(this.db, key, from);
  }

  /** The newest `take` submissions created by rows of the range, oldest submitted first. */
  submissionsCreatedIn(key: StoredSessionKey, rows: RowRange, take: number): Promise<StoredSubmission[]> {
    return readSubmissionsCreatedIn(this.db, key, rows, take);
  }

  /**
   * A reset snapshot's submissions: the newest `take` still open (pending or unknown) and the
   * newest `take` settled ones, oldest submitted first.
   */
  recoverySubmissions(key: StoredSessionKey, take: number): Promise<StoredSubmission[]> {
    return readRecoverySubmissions(this.db, key, SETTLED_STATES, take);
  }
}
