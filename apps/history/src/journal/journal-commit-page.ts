// The `after` page a session-batch's commit leaves for a reader that stood at the head before
// it, built from what the batch wrote instead of read back from Postgres. It rides on the
// commit notice (journal.consumer.ts), so a live SSE stream gets its batch without a page read:
// at 1,000 streamed sessions those reads were most of history's work and kept its commits
// seconds behind (docs/benchmarks.md, "B2: the page rides on the notice"). The projection is the
// page read's own (journal-pages/after-page.ts); anything that read would answer differently
// (another epoch, a forced row, a page over its bounds) gets no page, and readers read.
import { Limits, type JournalItem, type JournalPage } from '#contracts';
import type { StoredSessionKey } from '../common/session-rows.js';
import {
  afterPage,
  afterParts,
  byteLength,
  standIn,
  wireBase,
  type ItemPosition,
  type ItemState,
} from '../journal-pages/after-page.js';
import type { StoredSubmission } from '../journal-pages/journal-pages.sql.js';
import type {
  BatchReads,
  ItemCreation,
  ItemRow,
  JournalRowWrite,
  PlainBody,
  SubmissionWrite,
} from './journal-records.js';

/** A commit's page: exactly the `after` page from `from` in the page's epoch, as of the commit. */
export interface CommitPage {
  key: StoredSessionKey;
  from: bigint;
  page: JournalPage;
}

/** What a folded batch applied, for its page. */
export interface CommittedBatch {
  key: StoredSessionKey;
  epoch: string;
  fence: number;
  /** The applied rows, in order (their sequences are consecutive). */
  rows: readonly JournalRowWrite[];
  /** Every touched item's state as the batch leaves it (`created` when a row of it created the item). */
  items: ReadonlyMap<string, Omit<ItemRow, 'itemId'>>;
  /** The body of every item the batch upserted, as last upserted, in the clear. */
  bodies: ReadonlyMap<string, PlainBody>;
  submissions: ReadonlyMap<string, SubmissionWrite>;
  read: Pick<BatchReads, 'positions' | 'storedSubmissions'>;
}

type PagedItem = ItemState & ItemPosition & ItemCreation & { body: PlainBody | null };

/** `,"body":` between an item's other fields and its body. */
const BODY_KEY_BYTES = Buffer.byteLength(',"body":');

/**
 * The page, or null when it would not be exactly what a page read answers: rows that do not
 * follow one another, more rows than a page takes, a touched item whose creation is unknown, or
 * more bytes than a page carries (a read then halves the window; here the reader just reads).
 */
export function commitPage(batch: CommittedBatch): CommitPage | null {
  const { rows } = batch;
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (!first || !last || rows.length > Limits.JOURNAL_PAGE_MAX_LIMIT) return null;
  if (!rows.every((row, i) => row.sequence === first.sequence + BigInt(i))) return null;
  const items = pagedItems(batch);
  if (items === null) return null;
  const from = first.sequence - 1n;
  // The bodies are the reducer's own objects: their JSON is the text history encrypted, whose
  // length is known, so no body is serialised or parsed here (the notice serialises it once).
  const wire = (item: PagedItem): JournalItem => {
    const { body } = item;
    if (body === null || body.bytes > Limits.JOURNAL_ITEM_MAX_BYTES) return standIn(item);
    // A render body is a JSON object; the wire type only says so more loosely.
    return { ...wireBase(item), body: body.value as unknown as Record<string, unknown> };
  };
  const sizeOf = (wired: JournalItem, item: PagedItem) =>
    wired.body && item.body
      ? byteLength(wireBase(item)) + BODY_KEY_BYTES + item.body.bytes
      : byteLength(wired);
  const parts = afterParts(rows, items, currentSubmissions(batch), wire, sizeOf);
  if (parts.bytes > Limits.JOURNAL_PAGE_MAX_BYTES) return null;
  const head = {
    sessionId: batch.key.sessionId,
    epoch: batch.epoch,
    head: last.sequence,
    fence: batch.fence,
  };
  return {
    key: batch.key,
    from,
    page: afterPage(head, { epoch: batch.epoch, sequence: Number(from) }, rows, parts),
  };
}

/** Every touched item at its new state, by creation position; null when one cannot be placed. */
function pagedItems(batch: CommittedBatch): PagedItem[] | null {
  const touched = new Set(batch.rows.flatMap((row) => row.touched));
  const items: PagedItem[] = [];
  for (const itemId of touched) {
    const state = batch.items.get(itemId);
    const created = state?.created;
    const creation: ItemCreation | undefined = created
      ? { sequence: created.sequence, ordinal: created.ordinal, observedAt: created.observedAt.getTime() }
      : batch.read.positions.get(itemId);
    if (!state || !creation) return null;
    const body = state.deleted ? null : (batch.bodies.get(itemId) ?? null);
    if (!state.deleted && body === null) return null;
    items.push({ itemId, revision: state.revision, deleted: state.deleted, ...creation, body });
  }
  return items.sort((a, b) =>
    a.sequence === b.sequence ? a.ordinal - b.ordinal : a.sequence < b.sequence ? -1 : 1,
  );
}

/** Every submission a row of the batch named, at its new state, oldest submitted first. */
function currentSubmissions(batch: CommittedBatch): StoredSubmission[] {
  const named = new Set(batch.rows.flatMap((row) => (row.clientMessageId ? [row.clientMessageId] : [])));
  const current: StoredSubmission[] = [];
  for (const id of named) {
    const stored = batch.read.storedSubmissions.get(id);
    const write = batch.submissions.get(id);
    const state = write ? applied(write, stored) : stored;
    if (state) current.push(state);
  }
  return current.sort((a, b) =>
    a.submittedAt === b.submittedAt ? Number(a.sequence - b.sequence) : a.submittedAt - b.submittedAt,
  );
}

/** A submission as the batch's write leaves it (an update of one never stored changes nothing). */
function applied(write: SubmissionWrite, stored: StoredSubmission | undefined): StoredSubmission | undefined {
  const settled = {
    dispatchState: write.settled.dispatchState,
    reason: write.settled.reason,
    itemId: write.settled.itemId,
    resolvedAt: write.settled.resolvedAt?.getTime() ?? null,
  };
  if (write.kind === 'update') return stored && { ...stored, ...settled };
  return {
    clientMessageId: write.clientMessageId,
    fence: write.fence,
    payloadFingerprint: write.payloadFingerprint,
    sequence: write.sequence,
    submittedAt: write.submittedAt.getTime(),
    ...settled,
  };
}
