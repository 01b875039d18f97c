import { Injectable } from '@nestjs/common';
import {
  Limits,
  type HistoryJournalPageReply,
  type HistoryJournalPageRequest,
  type JournalCursor,
  type JournalItem,
  type JournalResetReason,
  type JournalSnapshot,
} from '#contracts';
import { StoredSessionNotFoundError } from '../common/errors.js';
import { Aad, HistoryCipher } from '../common/history-cipher.js';
import { parseEdgeId } from '../common/ids.js';
import type { StoredSessionKey } from '../common/session-rows.js';
import {
  afterPage,
  afterParts,
  byteLength,
  itemOnWire,
  standIn,
  submissionView,
  type PageHead,
} from './after-page.js';
import {
  JournalPagesRepository,
  type AfterRead,
  type JournalHead,
  type StoredItem,
} from './journal-pages.repository.js';

/** Items of a backward page, oldest first, and whether older ones exist. */
interface BackwardPage {
  items: JournalItem[];
  hasOlder: boolean;
}

/**
 * Submissions one page or snapshot carries at most (per kind, for a snapshot: open and settled).
 * A submission is a few hundred bytes of ids and states, so 200 stay far below the byte budget.
 */
const PAGE_SUBMISSIONS_MAX = Limits.JOURNAL_PAGE_MAX_LIMIT;

/**
 * The page size history uses whatever reaches it (reference orca §2.1): missing, NaN or infinite is the
 * default 40; otherwise floored into 1..200. The RPC schema already refuses anything else, so
 * this only guards callers inside history.
 */
export function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return Limits.JOURNAL_PAGE_DEFAULT_LIMIT;
  return Math.min(Math.max(Math.floor(limit), 1), Limits.JOURNAL_PAGE_MAX_LIMIT);
}

/**
 * Pages of a session's structured journal (reference orca §2.1). `tail` and `before` read the reduced
 * item list (so they survive compaction); `after` reads rows and publishes every item they touched
 * at its current state, so a client that applies a page twice converges. Every page is bounded in
 * items and bytes; an unusable cursor answers a reset with a bounded snapshot inline.
 */
@Injectable()
export class JournalPagesService {
  constructor(
    private readonly pages: JournalPagesRepository,
    private readonly cipher: HistoryCipher,
  ) {}

  async page(request: HistoryJournalPageRequest): Promise<HistoryJournalPageReply> {
    const edgeId = parseEdgeId(request.edge_id);
    if (edgeId === null) throw new StoredSessionNotFoundError();
    const key: StoredSessionKey = {
      ownerId: request.actor_id,
      accessId: request.access_id,
      edgeId,
      sessionId: request.session_id,
    };
    const limit = clampLimit(request.limit);
    const cursor = request.direction === 'tail' ? undefined : request.cursor;
    if (request.direction === 'after' && cursor) {
      // The common page (one per notice and subscriber): head, rows, items and submissions in
      // one read; the rows are read only for a cursor that passes the same checks as below.
      const read = await this.pages.after(
        key,
        { epoch: cursor.epoch, sequence: BigInt(cursor.sequence) },
        limit,
      );
      if (read === null) throw new StoredSessionNotFoundError();
      const refusal = this.checkCursor(cursor, read.head, true);
      if (refusal) return this.reset(key, read.head, refusal);
      return this.after(key, read, cursor, limit);
    }
    const head = await this.pages.head(key);
    if (head === null) throw new StoredSessionNotFoundError();
    const reset = (reason: JournalResetReason) => this.reset(key, head, reason);

    // A reader with no position cannot place the tail: it reloads (reference orca §2.1).
    if (request.direction === 'after') return reset('cursor_ahead');
    if (cursor) {
      const refusal = this.checkCursor(cursor, head, false);
      if (refusal) return reset(refusal);
    }
    const below = cursor ? BigInt(cursor.sequence) : null;
    const { items, hasOlder } = await this.backward(key, below, limit);
    const position = (item: JournalItem): JournalCursor => ({ epoch: head.epoch, sequence: item.sequence });
    const oldest = items[0];
    const newest = items[items.length - 1];
    // The rows this page stands for: from its oldest item (or the start, when nothing older is
    // left) up to the cursor (exclusive) or the head, so tail and before pages tile the journal.
    const submissions = await this.pages.submissionsCreatedIn(
      key,
      {
        epoch: head.epoch,
        from: hasOlder && oldest ? BigInt(oldest.sequence) : 0n,
        to: below === null ? head.head : below - 1n,
      },
      PAGE_SUBMISSIONS_MAX,
    );
    return {
      ok: true,
      page: {
        sessionId: key.sessionId,
        epoch: head.epoch,
        direction: request.direction,
        items,
        removedItemIds: [],
        submissions: submissions.map(submissionView),
        window: {
          oldest: oldest ? position(oldest) : null,
          newest: newest ? position(newest) : null,
          nextCursor: oldest ? position(oldest) : (cursor ?? { epoch: head.epoch, sequence: 0 }),
        },
        hasOlder,
        hasNewer: below !== null && (await this.pages.hasItemsFrom(key, below)),
        fence: head.fence,
      },
    };
  }

  /** The resume checks in the reference's order: epoch, ahead, then (for `after`) compacted. */
  private checkCursor(cursor: JournalCursor, head: JournalHead, replay: boolean): JournalResetReason | null {
    if (cursor.epoch !== head.epoch) return 'epoch_changed';
    const sequence = BigInt(cursor.sequence);
    if (sequence > head.head) return 'cursor_ahead';
    // Sitting exactly on the floor is fine: the next row is still there.
    if (replay && sequence < head.oldest - 1n) return 'cursor_compacted';
    return null;
  }

  private async reset(
    key: StoredSessionKey,
    head: JournalHead,
    reason: JournalResetReason,
  ): Promise<HistoryJournalPageReply> {
    return { ok: false, reset: reason, snapshot: await this.snapshot(key, head) };
  }

  /** The bounded recovery state: the newest items within the page bounds. */
  async snapshot(key: StoredSessionKey, head: JournalHead): Promise<JournalSnapshot> {
    const { items, hasOlder } = await this.backward(key, null, Limits.JOURNAL_PAGE_MAX_LIMIT);
    return {
      sessionId: key.sessionId,
      cursor: { epoch: head.epoch, sequence: Number(head.head) },
      items,
      submissions: (await this.pages.recoverySubmissions(key, PAGE_SUBMISSIONS_MAX)).map(submissionView),
      hasOlder,
      fence: head.fence,
    };
  }

  /**
   * The newest `limit` live items created before `below`, never splitting the items one row
   * created (a `before` cursor is a row position, so a split group would lose its older half),
   * then cut to the byte budget at a group boundary.
   */
  private async backward(key: StoredSessionKey, below: bigint | null, limit: number): Promise<BackwardPage> {
    const rows = await this.pages.newestItems(key, below, limit + 1);
    let page = rows.slice(0, limit);
    const boundary = page[page.length - 1]?.sequence;
    if (rows.length > limit && boundary !== undefined && rows[limit]?.sequence === boundary) {
      const whole = page.filter((item) => item.sequence !== boundary);
      // One row created more items than the limit: the page is that row, whole.
      page = whole.length > 0 ? whole : await this.pages.itemsOfSequence(key, boundary);
    }
    const kept: JournalItem[] = [];
    let used = 0;
    let index = 0;
    while (index < page.length) {
      const sequence = page[index]!.sequence;
      const group: JournalItem[] = [];
      for (; index < page.length && page[index]!.sequence === sequence; index += 1) {
        group.push(this.wireItem(key, page[index]!));
      }
      const size = group.reduce((sum, item) => sum + byteLength(item), 0);
      if (kept.length > 0 && used + size > Limits.JOURNAL_PAGE_MAX_BYTES) break;
      used += kept.length === 0 ? this.fitGroup(group) : size;
      kept.push(...group);
    }
    kept.reverse();
    const oldest = kept[0];
    const hasOlder =
      oldest !== undefined
        ? (await this.pages.newestItems(key, BigInt(oldest.sequence), 1)).length > 0
        : below === null
          ? false
          : (await this.pages.newestItems(key, below, 1)).length > 0;
    return { items: kept, hasOlder };
  }

  /** A first group above the budget keeps its items, the ones past the budget as stand-ins. */
  private fitGroup(group: JournalItem[]): number {
    let used = 0;
    group.forEach((item, i) => {
      const size = byteLength(item);
      if (used + size > Limits.JOURNAL_PAGE_MAX_BYTES && item.body !== undefined) {
        group[i] = standIn(item);
        used += byteLength(group[i]);
      } else {
        used += size;
      }
    });
    return used;
  }

  /**
   * Rows after the cursor (at most `limit`), projected to the current state of every item they
   * touched. A window that does not fit the byte budget is halved rather than clipped: clipping
   * items while advancing the cursor would lose a revision for good. The read holds the state of
   * every item and submission of the full window, so a halved window is a filter of it, and each
   * item is decrypted once however often the window halves.
   */
  private async after(
    key: StoredSessionKey,
    read: AfterRead,
    cursor: JournalCursor,
    limit: number,
  ): Promise<HistoryJournalPageReply> {
    const { head, rows } = read;
    const from = BigInt(cursor.sequence);
    // The reducer applied across a hole (a row given up on), or rows are missing before the head.
    const contiguous = rows.every((row, i) => row.sequence === from + BigInt(i + 1));
    const reachedHead = rows.length === limit || from + BigInt(rows.length) >= head.head;
    if (!contiguous || !reachedHead) {
      // Compaction may have raised the floor since the head was read: then that is the answer.
      const now = await this.pages.head(key);
      if (now === null) throw new StoredSessionNotFoundError();
      return this.reset(key, now, this.checkCursor(cursor, now, true) ?? 'journal_gap');
    }

    const wired = new Map<string, JournalItem>();
    const wire = (item: StoredItem) => {
      let wireItem = wired.get(item.itemId);
      if (wireItem === undefined) {
        wireItem = this.wireItem(key, item);
        wired.set(item.itemId, wireItem);
      }
      return wireItem;
    };
    const pageHead: PageHead = {
      sessionId: key.sessionId,
      epoch: head.epoch,
      head: head.head,
      fence: head.fence,
    };
    let window = rows.length;
    for (;;) {
      const taken = rows.slice(0, window);
      const parts = afterParts(taken, read.items, read.submissions, wire);
      if (parts.bytes > Limits.JOURNAL_PAGE_MAX_BYTES && window > 1) {
        window = Math.ceil(window / 2);
        continue;
      }
      if (parts.bytes > Limits.JOURNAL_PAGE_MAX_BYTES) this.fitGroup(parts.items);
      return { ok: true, page: afterPage(pageHead, cursor, taken, parts) };
    }
  }

  /** One stored item on the wire: decrypted, or a stand-in when it alone is over the item bound. */
  private wireItem(key: StoredSessionKey, item: StoredItem): JournalItem {
    const text = item.body === null ? null : this.cipher.decrypt(item.body, Aad.item(key, item.itemId));
    return itemOnWire(item, text);
  }
}
