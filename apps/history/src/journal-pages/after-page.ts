// The projection of an `after` page (reference orca §2.1), with no I/O: rows after a cursor
// publish every item they touched and every submission they wrote, each at its current state.
// Two callers hold that state: the page read (journal-pages.service.ts, from Postgres) and the
// journal write path right after its commit (journal-commit-page.ts, from what it just wrote),
// whose page rides on the commit notice so a live SSE stream needs no read. One projection keeps
// the two byte for byte the same.
import {
  Limits,
  type DispatchState,
  type JournalCursor,
  type JournalItem,
  type JournalPage,
  type JournalSubmissionView,
} from '#contracts';
import type { StoredSubmission } from './journal-pages.sql.js';

export const byteLength = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/** One journal row after the cursor: its position, the items it touched and the submission it wrote. */
export interface TouchingRow {
  sequence: bigint;
  touched: readonly string[];
  clientMessageId: string | null;
}

/** What the projection needs of an item's current state. */
export interface ItemState {
  itemId: string;
  deleted: boolean;
}

/** The parts of an `after` page the rows decide, and their size on the wire. */
export interface AfterParts {
  items: JournalItem[];
  removedItemIds: string[];
  submissions: JournalSubmissionView[];
  bytes: number;
}

/**
 * The items and submissions of `taken` rows. `items` is the current state of (at least) every
 * item the rows touched, ordered by creation position (sequence, then ordinal); `submissions`
 * the current state of (at least) every submission they wrote, oldest submitted first. A
 * touched item that is deleted now is a removal.
 */
export function afterParts<Item extends ItemState>(
  taken: readonly TouchingRow[],
  items: readonly Item[],
  submissions: readonly StoredSubmission[],
  wire: (item: Item) => JournalItem,
  /** An item's JSON byte length on the wire; a caller that knows it spares the serialisation. */
  sizeOf: (wired: JournalItem, item: Item) => number = byteLength,
): AfterParts {
  const touched = [...new Set(taken.flatMap((row) => row.touched))];
  const inWindow = new Set(touched);
  const live = items.filter((item) => !item.deleted && inWindow.has(item.itemId));
  const liveIds = new Set(live.map((item) => item.itemId));
  const wired = live.map(wire);
  const removedItemIds = touched.filter((id) => !liveIds.has(id));
  // A settlement row overrides its pending one: both show the submission's current state.
  const written = new Set(taken.flatMap((row) => (row.clientMessageId ? [row.clientMessageId] : [])));
  const views = submissions
    .filter((submission) => written.has(submission.clientMessageId))
    .map(submissionView);
  const bytes = wired.reduce(
    (sum, item, index) => sum + sizeOf(item, live[index]!),
    byteLength(removedItemIds) + byteLength(views),
  );
  return { items: wired, removedItemIds, submissions: views, bytes };
}

/** Where the journal stood when the page was cut. */
export interface PageHead {
  sessionId: string;
  epoch: string;
  head: bigint;
  fence: number;
}

/** The `after` page of `parts`, the rows `taken` after `cursor` (their last one is the next cursor). */
export function afterPage(
  head: PageHead,
  cursor: JournalCursor,
  taken: readonly TouchingRow[],
  parts: Omit<AfterParts, 'bytes'>,
): JournalPage {
  const { epoch } = head;
  const last = taken[taken.length - 1]?.sequence;
  const nextCursor = last !== undefined ? { epoch, sequence: Number(last) } : cursor;
  const first = parts.items[0];
  const newest = parts.items[parts.items.length - 1];
  return {
    sessionId: head.sessionId,
    epoch,
    direction: 'after',
    items: parts.items,
    removedItemIds: parts.removedItemIds,
    submissions: parts.submissions,
    window: {
      oldest: first ? { epoch, sequence: first.sequence } : null,
      newest: newest ? { epoch, sequence: newest.sequence } : null,
      nextCursor,
    },
    hasOlder: cursor.sequence > 0,
    hasNewer: BigInt(nextCursor.sequence) < head.head,
    fence: head.fence,
  };
}

/** What every item on the wire states besides its body. */
export interface ItemPosition {
  itemId: string;
  revision: number;
  /** The row that created it. */
  sequence: bigint;
  observedAt: number;
}

/**
 * An item on the wire from its body's JSON text (null: none kept): a stand-in, with no body, when
 * there is none or it alone is over the item bound.
 */
export function itemOnWire(item: ItemPosition, text: string | null): JournalItem {
  if (text === null || Buffer.byteLength(text) > Limits.JOURNAL_ITEM_MAX_BYTES) return standIn(item);
  return { ...wireBase(item), body: JSON.parse(text) as Record<string, unknown> };
}

/** What every item on the wire states besides its body. */
export function wireBase(item: ItemPosition | JournalItem): Omit<JournalItem, 'body' | 'oversize'> {
  return {
    itemId: item.itemId,
    revision: item.revision,
    sequence: Number(item.sequence),
    observedAt: item.observedAt,
  };
}

/** An item without its body: none is kept, or it is over a bound. The client knows it exists. */
export function standIn(item: ItemPosition | JournalItem): JournalItem {
  return { ...wireBase(item), oversize: true };
}

export function submissionView(stored: StoredSubmission): JournalSubmissionView {
  return {
    clientMessageId: stored.clientMessageId,
    fence: stored.fence,
    payloadFingerprint: stored.payloadFingerprint,
    dispatchState: stored.dispatchState as DispatchState,
    reason: stored.reason,
    itemId: stored.itemId,
    sequence: Number(stored.sequence),
    submittedAt: stored.submittedAt,
    resolvedAt: stored.resolvedAt,
  };
}
