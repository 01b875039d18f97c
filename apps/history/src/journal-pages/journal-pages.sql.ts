// The reads of a journal page as parameterised raw SQL. An `after` page (the one every journal
// notice costs, once per SSE subscriber) is ONE statement: the head, the rows after the cursor,
// the items they touched and the submissions they wrote come back together, the lists as JSON
// aggregates, so a page costs one round trip and no ORM query compilation. Every value goes in as
// a bound parameter (Prisma.sql tagged templates); only fixed fragments shape a statement.
import { Prisma, type PrismaClient } from '#persistence';
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
  /** Milliseconds since the epoch (stored at millisecond precision). */
  observedAt: number;
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
  /** Milliseconds since the epoch. */
  submittedAt: number;
  resolvedAt: number | null;
}

/** One journal row after a cursor: its position, the ids it touched and the submission it wrote. */
export interface RowAfter {
  sequence: bigint;
  touched: string[];
  clientMessageId: string | null;
}

/** What an `after` page reads: the head, and (when the cursor is usable) what lies after it. */
export interface AfterRead {
  head: JournalHead;
  /** Up to `take` rows after the cursor, oldest first; empty when the cursor is refused. */
  rows: RowAfter[];
  /** The current state of every item the rows touched, by creation position. */
  items: StoredItem[];
  /** The current state of every submission the rows wrote, oldest submitted first. */
  submissions: StoredSubmission[];
}

type Db = PrismaClient | Prisma.TransactionClient;

/** The scope columns of `alias`, matched against the key. */
function scoped(alias: string, key: StoredSessionKey): Prisma.Sql {
  const t = Prisma.raw(alias);
  return Prisma.sql`${t}.session_id = ${key.sessionId} AND ${t}.owner_id = ${key.ownerId}
    AND ${t}.access_id = ${key.accessId} AND ${t}.edge_id = ${key.edgeId}`;
}

/** The journal state of a live session (not deleted) in this scope: head, floor and fence. */
function stateOf(key: StoredSessionKey): Prisma.Sql {
  return Prisma.sql`SELECT s.epoch, s.head_sequence, s.oldest_sequence, s.fence
    FROM journal_states s
    WHERE ${scoped('s', key)}
      AND EXISTS (SELECT 1 FROM session_histories h WHERE ${scoped('h', key)} AND NOT h.deleted)`;
}

/** Milliseconds since the epoch of a timestamptz(3) column (exact: whole milliseconds). */
export function millis(column: string): Prisma.Sql {
  return Prisma.raw(`floor(extract(epoch FROM ${column}) * 1000)::bigint`);
}

/** An item as a JSON array (body as base64), decoded by `itemOf`. */
const ITEM_JSON = Prisma.sql`json_build_array(i.item_id, i.revision, i.sequence::text, i.ordinal,
  ${millis('i.observed_at')}, encode(i.body, 'base64'), i.deleted)`;
type ItemJson = [string, number, string, number, number, string | null, boolean];

/** A submission as a JSON array, decoded by `submissionOf`. */
export const SUBMISSION_JSON = Prisma.sql`json_build_array(j.client_message_id, j.fence, j.payload_fingerprint,
  j.dispatch_state, j.reason, j.item_id, j.sequence::text, ${millis('j.submitted_at')}, ${millis('j.resolved_at')})`;
export type SubmissionJson = [
  string,
  number,
  string,
  string,
  string | null,
  string | null,
  string,
  number,
  number | null,
];

const itemOf = ([itemId, revision, sequence, ordinal, observedAt, body, deleted]: ItemJson): StoredItem => ({
  itemId,
  revision,
  sequence: BigInt(sequence),
  ordinal,
  observedAt: Number(observedAt),
  body: body === null ? null : Buffer.from(body, 'base64'),
  deleted,
});

export const submissionOf = ([
  clientMessageId,
  fence,
  payloadFingerprint,
  dispatchState,
  reason,
  itemId,
  sequence,
  submittedAt,
  resolvedAt,
]: SubmissionJson): StoredSubmission => ({
  clientMessageId,
  fence,
  payloadFingerprint,
  dispatchState,
  reason,
  itemId,
  sequence: BigInt(sequence),
  submittedAt: Number(submittedAt),
  resolvedAt: resolvedAt === null ? null : Number(resolvedAt),
});

type HeadRow = { epoch: string; head_sequence: bigint; oldest_sequence: bigint; fence: number };

const headOf = (row: HeadRow): JournalHead => ({
  epoch: row.epoch,
  head: BigInt(row.head_sequence),
  oldest: BigInt(row.oldest_sequence),
  fence: Number(row.fence),
});

/** The journal head of a live session in this scope, or null (unknown, foreign or deleted). */
export async function readHead(db: Db, key: StoredSessionKey): Promise<JournalHead | null> {
  const rows = await db.$queryRaw<HeadRow[]>(stateOf(key));
  return rows[0] ? headOf(rows[0]) : null;
}

/**
 * An `after` page's reads in one statement, or null when the session is unknown, foreign or
 * deleted. Rows are read only when the cursor passes the resume checks against this head (same
 * epoch, not ahead, not below the floor), so a refused cursor costs the head alone.
 */
export async function readAfter(
  db: Db,
  key: StoredSessionKey,
  cursor: { epoch: string; sequence: bigint },
  take: number,
): Promise<AfterRead | null> {
  const rows = await db.$queryRaw<
    (HeadRow & {
      rows: [string, string[], string | null][] | null;
      items: ItemJson[] | null;
      submissions: SubmissionJson[] | null;
    })[]
  >`
    WITH st AS (${stateOf(key)}),
    r AS (
      SELECT j.sequence, j.touched, j.client_message_id
      FROM st JOIN journal j ON j.epoch = st.epoch AND ${scoped('j', key)}
      WHERE st.epoch = ${cursor.epoch} AND ${cursor.sequence}::bigint <= st.head_sequence
        AND ${cursor.sequence}::bigint >= st.oldest_sequence - 1 AND j.sequence > ${cursor.sequence}::bigint
      ORDER BY j.sequence
      LIMIT ${take}::int)
    SELECT st.epoch, st.head_sequence, st.oldest_sequence, st.fence,
      (SELECT json_agg(json_build_array(r.sequence::text, r.touched, r.client_message_id) ORDER BY r.sequence)
        FROM r) AS rows,
      (SELECT json_agg(${ITEM_JSON} ORDER BY i.sequence, i.ordinal)
        FROM journal_items i
        WHERE ${scoped('i', key)} AND i.item_id IN (SELECT unnest(r.touched) FROM r)) AS items,
      (SELECT json_agg(${SUBMISSION_JSON} ORDER BY j.submitted_at, j.sequence)
        FROM journal_submissions j
        WHERE ${scoped('j', key)} AND j.client_message_id IN (SELECT r.client_message_id FROM r)) AS submissions
    FROM st`;
  const row = rows[0];
  if (!row) return null;
  return {
    head: headOf(row),
    rows: (row.rows ?? []).map(([sequence, touched, clientMessageId]) => ({
      sequence: BigInt(sequence),
      touched,
      clientMessageId,
    })),
    items: (row.items ?? []).map(itemOf),
    submissions: (row.submissions ?? []).map(submissionOf),
  };
}

/**
 * Up to `take` live items created strictly before `below` (all when null), newest first by
 * creation position.
 */
export async function readNewestItems(
  db: Db,
  key: StoredSessionKey,
  below: bigint | null,
  take: number,
): Promise<StoredItem[]> {
  const bound = below === null ? Prisma.empty : Prisma.sql`AND i.sequence < ${below}::bigint`;
  const rows = await db.$queryRaw<{ item: ItemJson }[]>`
    SELECT ${ITEM_JSON} AS item FROM journal_items i
    WHERE ${scoped('i', key)} AND NOT i.deleted ${bound}
    ORDER BY i.sequence DESC, i.ordinal DESC
    LIMIT ${take}::int`;
  return rows.map((row) => itemOf(row.item));
}

/** Every live item one row created, last created first. */
export async function readItemsOfSequence(
  db: Db,
  key: StoredSessionKey,
  sequence: bigint,
): Promise<StoredItem[]> {
  const rows = await db.$queryRaw<{ item: ItemJson }[]>`
    SELECT ${ITEM_JSON} AS item FROM journal_items i
    WHERE ${scoped('i', key)} AND NOT i.deleted AND i.sequence = ${sequence}::bigint
    ORDER BY i.ordinal DESC`;
  return rows.map((row) => itemOf(row.item));
}

/** True when a live item was created at or after `from`. */
export async function readHasItemsFrom(db: Db, key: StoredSessionKey, from: bigint): Promise<boolean> {
  const rows = await db.$queryRaw<{ found: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM journal_items i
      WHERE ${scoped('i', key)} AND NOT i.deleted AND i.sequence >= ${from}::bigint) AS found`;
  return rows[0]?.found === true;
}

/** Rows of one journal epoch from `from` up to `to`, both inclusive. */
export interface RowRange {
  epoch: string;
  from: bigint;
  to: bigint;
}

/** The newest `take` submissions created by rows of the range, oldest submitted first. */
export async function readSubmissionsCreatedIn(
  db: Db,
  key: StoredSessionKey,
  { epoch, from, to }: RowRange,
  take: number,
): Promise<StoredSubmission[]> {
  const rows = await db.$queryRaw<{ submission: SubmissionJson }[]>`
    SELECT ${SUBMISSION_JSON} AS submission FROM journal_submissions j
    WHERE ${scoped('j', key)} AND j.epoch = ${epoch}
      AND j.sequence >= ${from}::bigint AND j.sequence <= ${to}::bigint
    ORDER BY j.sequence DESC
    LIMIT ${take}::int`;
  return rows.map((row) => submissionOf(row.submission)).sort(bySubmission);
}

/**
 * A reset snapshot's submissions: the newest `take` still open (any state but a settled one) and
 * the newest `take` settled ones, oldest submitted first.
 */
export async function readRecoverySubmissions(
  db: Db,
  key: StoredSessionKey,
  settledStates: readonly string[],
  take: number,
): Promise<StoredSubmission[]> {
  const newest = (settled: boolean) => Prisma.sql`(SELECT ${SUBMISSION_JSON} AS submission
    FROM journal_submissions j
    WHERE ${scoped('j', key)}
      AND (j.dispatch_state = ANY(${settledStates}::text[])) = ${settled}
    ORDER BY j.submitted_at DESC, j.sequence DESC
    LIMIT ${take}::int)`;
  const rows = await db.$queryRaw<{ submission: SubmissionJson }[]>`
    ${newest(false)} UNION ALL ${newest(true)}`;
  return rows.map((row) => submissionOf(row.submission)).sort(bySubmission);
}

function bySubmission(a: StoredSubmission, b: StoredSubmission): number {
  const time = a.submittedAt - b.submittedAt;
  if (time !== 0) return time;
  return a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0;
}
