import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient } from '#persistence';
import type { StoredSessionKey } from '../common/session-rows.js';

/** Where a session's structured journal stands (the scope matched). */
export interface JournalHead {
  epoch: string;
  head: bigint;
  oldest: bigint;
  /** The highest runtime fence the journal's rows carried (0 before fenced rows). */
  fence: number;
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

/** One stored submission (ids, states and a fingerprint: nothing encrypted). */
export interface StoredSubmission {
  clientMessageId: string;
  fence: number;
  payloadFingerprint: string;
  dispatchState: string;
  reason: string | null;
  itemId: string | null;
  sequence: bigint;
  submittedAt: Date;
  resolvedAt: Date | null;
}

const SUBMISSION_SELECT = {
  clientMessageId: true,
  fence: true,
  payloadFingerprint: true,
  dispatchState: true,
  reason: true,
  itemId: true,
  sequence: true,
  submittedAt: true,
  resolvedAt: true,
} as const;

/** Dispatch states that are final answers; the others may still change. */
const SETTLED_STATES = ['accepted', 'rejected'];

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
        select: { epoch: true, headSequence: true, oldestSequence: true, fence: true },
      }),
      this.db.sessionHistory.findFirst({ where: { ...key, deleted: false }, select: { sessionId: true } }),
    ]);
    if (!state || !session) return null;
    return {
      epoch: state.epoch,
      head: state.headSequence,
      oldest: state.oldestSequence,
      fence: state.fence,
    };
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

  /**
   * Up to `take` journal rows of the epoch after `after`, oldest first: position, touched ids and
   * the submission a submission row wrote.
   */
  rowsAfter(
    key: StoredSessionKey,
    epoch: string,
    after: bigint,
    take: number,
  ): Promise<{ sequence: bigint | null; touched: string[]; clientMessageId: string | null }[]> {
    return this.db.journalRow.findMany({
      where: { ...key, epoch, sequence: { gt: after } },
      orderBy: { sequence: 'asc' },
      take,
      select: { sequence: true, touched: true, clientMessageId: true },
    });
  }

  /** The current state of the named submissions, oldest submitted first. */
  submissionsById(key: StoredSessionKey, clientMessageIds: string[]): Promise<StoredSubmission[]> {
    if (clientMessageIds.length === 0) return Promise.resolve([]);
    return this.db.journalSubmission.findMany({
      where: { ...key, clientMessageId: { in: clientMessageIds } },
      orderBy: [{ submittedAt: 'asc' }, { sequence: 'asc' }],
      select: SUBMISSION_SELECT,
    });
  }

  /**
   * The newest `take` submissions created by rows of the epoch from `from` up to `to` (both
   * inclusive), oldest submitted first.
   */
  async submissionsCreatedIn(
    key: StoredSessionKey,
    epoch: string,
    from: bigint,
    to: bigint,
    take: number,
  ): Promise<StoredSubmission[]> {
    const rows = await this.db.journalSubmission.findMany({
      where: { ...key, epoch, sequence: { gte: from, lte: to } },
      orderBy: [{ sequence: 'desc' }],
      take,
      select: SUBMISSION_SELECT,
    });
    return rows.sort(bySubmission);
  }

  /**
   * A reset snapshot's submissions: the newest `take` still open (pending or unknown) and the
   * newest `take` settled ones, oldest submitted first.
   */
  async recoverySubmissions(key: StoredSessionKey, take: number): Promise<StoredSubmission[]> {
    const newest = (settled: boolean) =>
      this.db.journalSubmission.findMany({
        where: { ...key, dispatchState: settled ? { in: SETTLED_STATES } : { notIn: SETTLED_STATES } },
        orderBy: [{ submittedAt: 'desc' }, { sequence: 'desc' }],
        take,
        select: SUBMISSION_SELECT,
      });
    const [open, settled] = await Promise.all([newest(false), newest(true)]);
    return [...open, ...settled].sort(bySubmission);
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

function bySubmission(a: StoredSubmission, b: StoredSubmission): number {
  const time = a.submittedAt.getTime() - b.submittedAt.getTime();
  if (time !== 0) return time;
  return a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0;
}
