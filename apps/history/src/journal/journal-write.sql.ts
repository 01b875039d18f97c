// The statements of a session-batch write (JournalRepository.saveBatches), as parameterised raw
// SQL: a batch costs a fixed handful of round trips (lock, read, write) instead of one ORM
// statement per row and per item, and raw statements skip Prisma's query compiler. Every value
// goes in as a bound parameter (Prisma.sql tagged templates, arrays as typed array parameters);
// only the statement's shape depends on the batch.
import { Prisma } from '#persistence';
import type { DispatchState } from '#contracts';
import { lockSessionRow, type StoredSessionKey } from '../common/session-rows.js';
import {
  millis,
  SUBMISSION_JSON,
  submissionOf,
  type SubmissionJson,
} from '../journal-pages/journal-pages.sql.js';
import type { BatchReads, BatchWrites, SessionColumns } from './journal-records.js';

/** The access and the session row, as the lock statement leaves them. */
type SessionLock =
  /** The access is gone (or never matched owner and edge). */
  | 'no_access'
  /** The access is held; the session row is locked, or null when there is none. */
  | { deleted: boolean; revision: bigint }
  | null;

/** A session row as a writer holds it; `inserted` when this transaction created it. */
export type HeldSession = 'no_access' | { deleted: boolean; revision: bigint; inserted: boolean } | null;

/** A session to lock, and the row to insert when it has none (null: do not create one). */
export interface LockTarget {
  key: StoredSessionKey;
  /** Called only when the row is missing (it seals ciphertexts). */
  create: (() => SessionColumns & { createdAt: Date }) | null;
}

/**
 * The journal's row-lock protocol, taken by every journal write: the accesses and session rows
 * of the targets are locked in the given order (`lockAccessesAndSessions`), then a missing
 * session row is inserted from its target's `create` (insert-or-ignore: a concurrent insert wins
 * harmlessly) and held, by the insert itself or by locking the row that won.
 */
export async function lockSessionsForWrite(
  tx: Prisma.TransactionClient,
  targets: readonly LockTarget[],
): Promise<HeldSession[]> {
  const locks = await lockAccessesAndSessions(
    tx,
    targets.map((target) => target.key),
  );
  const held: HeldSession[] = [];
  for (const [at, { key, create }] of targets.entries()) {
    const lock = locks[at] ?? null;
    if (lock === 'no_access') held.push(lock);
    else if (lock !== null) held.push({ ...lock, inserted: false });
    else if (create === null) held.push(null);
    else {
      const state = create();
      const inserted = await insertSession(tx, key, state);
      const row = inserted ? { deleted: false, revision: state.revision } : await lockSessionRow(tx, key);
      held.push(row && { ...row, inserted });
    }
  }
  return held;
}

/**
 * For each key in the given order (the caller sorts them, so two multi-session writers never
 * wait on each other in a cycle): holds the access (FOR SHARE), then locks the session row (FOR
 * UPDATE), in one round trip. The session's subquery is LATERAL on the access row, so each
 * session row is locked only after its access is held (the order every writer of session rows
 * takes, see session-rows.ts), and the keys are walked in order (a nested loop over them).
 */
async function lockAccessesAndSessions(
  tx: Prisma.TransactionClient,
  keys: readonly StoredSessionKey[],
): Promise<SessionLock[]> {
  const rows = await tx.$queryRaw<
    { ord: bigint; access: boolean; deleted: boolean | null; revision: bigint | null }[]
  >`
    SELECT k.ord, a.id IS NOT NULL AS access, s.deleted, s.revision
    FROM unnest(${keys.map((key) => key.ownerId)}::text[], ${keys.map((key) => key.accessId)}::char(32)[],
      ${keys.map((key) => key.edgeId)}::bigint[], ${keys.map((key) => key.sessionId)}::text[])
      WITH ORDINALITY AS k(owner_id, access_id, edge_id, session_id, ord)
    LEFT JOIN LATERAL (
      SELECT id FROM agent_accesses
      WHERE id = k.access_id AND owner_id = k.owner_id AND edge_id = k.edge_id
      FOR SHARE) a ON true
    LEFT JOIN LATERAL (
      SELECT deleted, revision FROM session_histories
      WHERE owner_id = k.owner_id AND access_id = a.id AND edge_id = k.edge_id AND session_id = k.session_id
      FOR UPDATE) s ON true
    ORDER BY k.ord`;
  return rows.map((row): SessionLock => {
    if (!row.access) return 'no_access';
    if (row.deleted === null || row.revision === null) return null;
    return { deleted: row.deleted, revision: BigInt(row.revision) };
  });
}

/**
 * Inserts the session row unless one exists (insert-or-ignore: a concurrent insert wins
 * harmlessly); the inserted row is locked by this transaction. Returns false when a row was
 * there already (the caller locks that one).
 */
async function insertSession(
  tx: Prisma.TransactionClient,
  key: StoredSessionKey,
  state: SessionColumns & { createdAt: Date },
): Promise<boolean> {
  const inserted = await tx.$executeRaw`
    INSERT INTO session_histories (owner_id, access_id, edge_id, session_id, revision, epoch, payload,
      summary, running, closed, status, created_at, updated_at, synced_at)
    VALUES (${key.ownerId}, ${key.accessId}, ${key.edgeId}, ${key.sessionId}, ${state.revision}, ${state.epoch},
      ${state.payload}, ${state.summary}, ${state.running}, ${state.closed}, ${state.status},
      ${state.createdAt}, ${state.updatedAt}, ${state.syncedAt})
    ON CONFLICT DO NOTHING`;
  return inserted > 0;
}

/** Which session a read is for, and what it needs besides the state. */
export interface ReadRequest {
  sessionId: string;
  /** Read the reduced items (ids, revisions, digests: no content). */
  items: boolean;
  /** Read these stored submissions. */
  submissionIds: readonly string[];
}

type ReadRow = {
  session_id: string;
  epoch: string | null;
  window: number | null;
  last_stream_seq: bigint | null;
  fence: number | null;
  items: [string, number, string | null, boolean, string, number, number][] | null;
  submissions: SubmissionJson[] | null;
};

/**
 * For each session in the given order, locks its journal state (FOR UPDATE) when `lock`, and
 * reads the requested items and submissions, all in one round trip. The reads share the
 * statement's snapshot, so they may be combined with the state lock only for a session whose
 * row the caller already holds: every journal writer of a session takes that lock first, so
 * nothing it guards can change between the snapshot and the state lock. A session without a
 * row has its reads redone after the lock (`lock` false).
 */
export async function readSessions(
  tx: Prisma.TransactionClient,
  requests: readonly ReadRequest[],
  lock: boolean,
): Promise<BatchReads[]> {
  const wanted = requests.flatMap((request) =>
    request.submissionIds.map((id) => ({ sessionId: request.sessionId, id })),
  );
  const state = lock
    ? Prisma.sql`LEFT JOIN LATERAL (SELECT epoch, last_stream_seq, fence, "window" FROM journal_states
        WHERE session_id = k.session_id FOR UPDATE) st ON true`
    : Prisma.sql`LEFT JOIN (SELECT NULL::text AS epoch, NULL::bigint AS last_stream_seq, NULL::int AS fence,
        NULL::int AS "window") st ON true`;
  const submissions =
    wanted.length > 0
      ? Prisma.sql`(SELECT json_agg(${SUBMISSION_JSON})
          FROM unnest(${wanted.map((want) => want.sessionId)}::text[], ${wanted.map((want) => want.id)}::text[])
            AS w(session_id, client_message_id)
          JOIN journal_submissions j
            ON j.session_id = w.session_id AND j.client_message_id = w.client_message_id
          WHERE w.session_id = k.session_id)`
      : Prisma.sql`NULL::json`;
  const rows = await tx.$queryRaw<ReadRow[]>`
    SELECT k.session_id, st.epoch, st.last_stream_seq, st.fence, st."window",
      CASE WHEN k.items THEN (SELECT json_agg(json_build_array(i.item_id, i.revision, i.body_digest, i.deleted,
          i.sequence::text, i.ordinal, ${millis('i.observed_at')}))
        FROM journal_items i WHERE i.session_id = k.session_id) END AS items,
      ${submissions} AS submissions
    FROM unnest(${requests.map((request) => request.sessionId)}::text[],
      ${requests.map((request) => request.items)}::bool[]) WITH ORDINALITY AS k(session_id, items, ord)
    ${state}
    ORDER BY k.ord`;
  return rows.map((row) => {
    const items = row.items ?? [];
    const submissions = (row.submissions ?? []).map(submissionOf);
    return {
      state:
        row.epoch === null
          ? undefined
          : { epoch: row.epoch, lastStreamSequence: BigInt(row.last_stream_seq!), fence: row.fence! },
      ...(row.window === null ? {} : { window: row.window }),
      items: new Map(
        items.map(([itemId, revision, digest, deleted]) => [itemId, { revision, digest, deleted }]),
      ),
      positions: new Map(
        items.map(([itemId, , , , sequence, ordinal, observedAt]) => [
          itemId,
          { sequence: BigInt(sequence), ordinal, observedAt: Number(observedAt) },
        ]),
      ),
      submissions: new Map(
        submissions.map((stored) => [
          stored.clientMessageId,
          {
            dispatchState: stored.dispatchState as DispatchState,
            payloadFingerprint: stored.payloadFingerprint,
          },
        ]),
      ),
      storedSubmissions: new Map(submissions.map((stored) => [stored.clientMessageId, stored])),
    };
  });
}

/**
 * The stored snapshot (session row ciphertext) of each key, in the given order; null where the
 * row is missing, a tombstone or holds no snapshot. Read under the row locks the batch holds.
 */
export async function readStoredPayloads(
  tx: Prisma.TransactionClient,
  keys: readonly StoredSessionKey[],
): Promise<(Uint8Array<ArrayBuffer> | null)[]> {
  const rows = await tx.$queryRaw<{ payload: Uint8Array<ArrayBuffer> | null }[]>`
    SELECT h.payload
    FROM unnest(${keys.map((key) => key.ownerId)}::text[], ${keys.map((key) => key.accessId)}::char(32)[],
      ${keys.map((key) => key.edgeId)}::bigint[], ${keys.map((key) => key.sessionId)}::text[])
      WITH ORDINALITY AS k(owner_id, access_id, edge_id, session_id, ord)
    LEFT JOIN session_histories h ON h.owner_id = k.owner_id AND h.access_id = k.access_id
      AND h.edge_id = k.edge_id AND h.session_id = k.session_id AND h.deleted = false
    ORDER BY k.ord`;
  return rows.map((row) => row.payload);
}

/** Starts the reduced items of these sessions over (a new epoch). */
export async function clearItems(tx: Prisma.TransactionClient, sessionIds: readonly string[]): Promise<void> {
  await tx.$executeRaw`DELETE FROM journal_items WHERE session_id = ANY(${sessionIds}::text[])`;
}

/** Flattens per-session lists into one list of (key, value). */
function each<T>(writes: readonly BatchWrites[], pick: (write: BatchWrites) => readonly T[]) {
  return writes.flatMap((write) => pick(write).map((value) => ({ key: write.key, value })));
}

/** The key columns of a list of rows, as typed array parameters. */
function keyArrays(rows: readonly { key: StoredSessionKey }[]): Prisma.Sql {
  return Prisma.sql`${rows.map((row) => row.key.sessionId)}::text[], ${rows.map((row) => row.key.ownerId)}::text[],
    ${rows.map((row) => row.key.accessId)}::char(32)[], ${rows.map((row) => row.key.edgeId)}::bigint[]`;
}

/**
 * Writes the batches of several sessions (distinct session ids) in ONE statement: every part is
 * a data-modifying CTE (they all run, on disjoint rows, whether referenced or not) and the head
 * upsert is the main statement. Rows go in as typed arrays (unnest) or multi-row VALUES, one row
 * per item however many rows of a batch touched it.
 */
export async function writeBatches(
  tx: Prisma.TransactionClient,
  writes: readonly BatchWrites[],
): Promise<void> {
  const parts = [
    freshItems(writes),
    changedItems(writes),
    sessionRows(writes),
    journalRows(writes),
    createdSubmissions(writes),
    updatedSubmissions(writes),
    receiptRows(writes),
    archivedPages(writes),
    heads(writes),
  ].flatMap((part) => (part ? [part] : []));
  await tx.$executeRaw`
    WITH ${Prisma.join(parts, ',\n')}
    INSERT INTO journal_states (session_id, owner_id, access_id, edge_id, epoch, head_sequence,
      last_stream_seq, fence, updated_at, "window", oldest_sequence)
    SELECT session_id, owner_id, access_id, edge_id, epoch, head_sequence, last_stream_seq, fence, ${new Date()}::timestamptz,
      COALESCE("window", 0), 1
    FROM heads
    ON CONFLICT (session_id) DO UPDATE SET
      epoch = EXCLUDED.epoch,
      head_sequence = EXCLUDED.head_sequence,
      last_stream_seq = EXCLUDED.last_stream_seq,
      fence = EXCLUDED.fence,
      updated_at = EXCLUDED.updated_at,
      "window" = COALESCE((SELECT h."window" FROM heads h WHERE h.session_id = EXCLUDED.session_id),
        journal_states."window"),
      oldest_sequence = CASE WHEN (SELECT h.rolled FROM heads h WHERE h.session_id = EXCLUDED.session_id)
        THEN 1 ELSE journal_states.oldest_sequence END`;
}

/** Items not stored yet, inserted at their creation position. */
function freshItems(writes: readonly BatchWrites[]): Prisma.Sql | null {
  const fresh = each(writes, (write) => write.freshItems.map((item) => ({ item, epoch: write.head.epoch })));
  if (fresh.length === 0) return null;
  const items = fresh.map((row) => row.value.item);
  return Prisma.sql`fresh_items AS (
      INSERT INTO journal_items (session_id, owner_id, access_id, edge_id, item_id, epoch, revision,
        sequence, ordinal, observed_at, body, body_digest, deleted)
      SELECT * FROM unnest(${keyArrays(fresh)}, ${items.map((item) => item.itemId)}::text[],
        ${fresh.map((row) => row.value.epoch)}::text[], ${items.map((item) => item.revision)}::int[],
        ${items.map((item) => item.created!.sequence)}::bigint[], ${items.map((item) => item.created!.ordinal)}::int[],
        ${items.map((item) => item.created!.observedAt)}::timestamptz[], ${items.map((item) => item.body)}::bytea[],
        ${items.map((item) => item.digest)}::text[], ${items.map((item) => item.deleted)}::bool[]))`;
}

/** Stored items, updated in place. */
function changedItems(writes: readonly BatchWrites[]): Prisma.Sql | null {
  const changed = each(writes, (write) => write.changedItems);
  if (changed.length === 0) return null;
  const items = changed.map((row) => row.value);
  // A tombstoned id that comes back is a new item at its new position (`moved`); any other
  // change keeps the creation position.
  return Prisma.sql`changed_items AS (
      UPDATE journal_items i SET revision = t.revision, body = t.body, body_digest = t.body_digest,
        deleted = t.deleted,
        sequence = CASE WHEN t.moved THEN t.sequence ELSE i.sequence END,
        ordinal = CASE WHEN t.moved THEN t.ordinal ELSE i.ordinal END,
        observed_at = CASE WHEN t.moved THEN t.observed_at ELSE i.observed_at END
      FROM unnest(${changed.map((row) => row.key.sessionId)}::text[], ${items.map((item) => item.itemId)}::text[],
        ${items.map((item) => item.revision)}::int[], ${items.map((item) => item.body)}::bytea[],
        ${items.map((item) => item.digest)}::text[], ${items.map((item) => item.deleted)}::bool[],
        ${items.map((item) => item.created !== undefined)}::bool[],
        ${items.map((item) => item.created?.sequence ?? 0n)}::bigint[], ${items.map((item) => item.created?.ordinal ?? 0)}::int[],
        ${items.map((item) => item.created?.observedAt ?? null)}::timestamptz[])
        AS t(session_id, item_id, revision, body, body_digest, deleted, moved, sequence, ordinal, observed_at)
      WHERE i.session_id = t.session_id AND i.item_id = t.item_id)`;
}

/** The session rows the batches move to a higher revision (a tombstone is never written). */
function sessionRows(writes: readonly BatchWrites[]): Prisma.Sql | null {
  const sessions = writes.flatMap((write) =>
    write.session ? [{ key: write.key, value: write.session }] : [],
  );
  if (sessions.length === 0) return null;
  const rows = sessions.map((row) => row.value);
  return Prisma.sql`session_rows AS (
      UPDATE session_histories h SET revision = t.revision, epoch = t.epoch, payload = t.payload,
        summary = t.summary, running = t.running, closed = t.closed, status = t.status,
        updated_at = t.updated_at, synced_at = t.synced_at
      FROM unnest(${keyArrays(sessions)}, ${rows.map((row) => row.revision)}::bigint[],
        ${rows.map((row) => row.epoch)}::text[], ${rows.map((row) => row.payload)}::bytea[],
        ${rows.map((row) => row.summary)}::bytea[], ${rows.map((row) => row.running)}::bool[],
        ${rows.map((row) => row.closed)}::bool[], ${rows.map((row) => row.status)}::text[],
        ${rows.map((row) => row.updatedAt)}::timestamptz[], ${rows.map((row) => row.syncedAt)}::timestamptz[])
        AS t(session_id, owner_id, access_id, edge_id, revision, epoch, payload, summary, running, closed,
          status, updated_at, synced_at)
      WHERE h.owner_id = t.owner_id AND h.access_id = t.access_id AND h.edge_id = t.edge_id
        AND h.session_id = t.session_id AND h.deleted = false)`;
}

/** The journal rows of the applied rows. */
function journalRows(writes: readonly BatchWrites[]): Prisma.Sql | null {
  const journal = each(writes, (write) => write.journal);
  if (journal.length === 0) return null;
  const rows = journal.map((row) => row.value);
  // `touched` differs in length from row to row, so each row's list travels as one JSON text.
  // Insert-or-ignore on the row's position: a row stored already stays as it is.
  return Prisma.sql`journal_rows AS (
      INSERT INTO journal (session_id, owner_id, access_id, edge_id, epoch, revision, payload, recorded_at,
        sequence, touched, client_message_id)
      SELECT t.session_id, t.owner_id, t.access_id, t.edge_id, t.epoch, t.revision, t.payload, t.recorded_at,
        t.sequence, ARRAY(SELECT json_array_elements_text(t.touched::json)), t.client_message_id
      FROM unnest(${keyArrays(journal)}, ${rows.map((row) => row.epoch)}::text[],
        ${rows.map((row) => row.revision)}::bigint[], ${rows.map((row) => row.payload)}::bytea[],
        ${rows.map((row) => row.recordedAt)}::timestamptz[], ${rows.map((row) => row.sequence)}::bigint[],
        ${rows.map((row) => JSON.stringify(row.touched))}::text[], ${rows.map((row) => row.clientMessageId)}::text[])
        AS t(session_id, owner_id, access_id, edge_id, epoch, revision, payload, recorded_at, sequence, touched,
          client_message_id)
      ON CONFLICT DO NOTHING)`;
}

/** The windows the batches finished, archived; a page stored already (first write wins) stays. */
function archivedPages(writes: readonly BatchWrites[]): Prisma.Sql | null {
  const pages = each(writes, (write) => write.pages);
  if (pages.length === 0) return null;
  const rows = pages.map((row) => row.value);
  return Prisma.sql`archived_pages AS (
      INSERT INTO session_history_pages (session_id, owner_id, access_id, edge_id, "window", revision, payload)
      SELECT * FROM unnest(${keyArrays(pages)}, ${rows.map((row) => row.window)}::int[],
        ${rows.map((row) => row.revision)}::bigint[], ${rows.map((row) => row.payload)}::bytea[])
      ON CONFLICT DO NOTHING)`;
}

/** Submissions a row of a batch created, with the state of their latest applied row. */
function createdSubmissions(writes: readonly BatchWrites[]): Prisma.Sql | null {
  const submissions = each(writes, (write) => write.submissions);
  const created = submissions.flatMap(({ key, value }) => (value.kind === 'create' ? [{ key, value }] : []));
  if (created.length === 0) return null;
  const values = created.map(
    ({
      key,
      value: write,
    }) => Prisma.sql`(${key.sessionId}, ${write.clientMessageId}, ${key.ownerId}, ${key.accessId},
        ${key.edgeId}::bigint, ${write.epoch}, ${write.sequence}::bigint, ${write.fence}::int, ${write.payloadFingerprint},
        ${write.settled.dispatchState}, ${write.settled.reason}::text, ${write.settled.itemId}::text,
        ${write.submittedAt}::timestamptz, ${write.settled.resolvedAt}::timestamptz)`,
  );
  return Prisma.sql`created_submissions AS (
      INSERT INTO journal_submissions (session_id, client_message_id, owner_id, access_id, edge_id, epoch,
        sequence, fence, payload_fingerprint, dispatch_state, reason, item_id, submitted_at, resolved_at)
      VALUES ${Prisma.join(values)})`;
}

/** Stored submissions a batch settled or reopened. */
function updatedSubmissions(writes: readonly BatchWrites[]): Prisma.Sql | null {
  const submissions = each(writes, (write) => write.submissions);
  const updated = submissions.flatMap(({ key, value }) => (value.kind === 'update' ? [{ key, value }] : []));
  if (updated.length === 0) return null;
  const rows = updated.map((row) => row.value);
  return Prisma.sql`updated_submissions AS (
      UPDATE journal_submissions j SET dispatch_state = t.dispatch_state, reason = t.reason,
        item_id = t.item_id, resolved_at = t.resolved_at
      FROM unnest(${updated.map((row) => row.key.sessionId)}::text[], ${rows.map((row) => row.clientMessageId)}::text[],
        ${rows.map((row) => row.settled.dispatchState)}::text[], ${rows.map((row) => row.settled.reason)}::text[],
        ${rows.map((row) => row.settled.itemId)}::text[], ${rows.map((row) => row.settled.resolvedAt)}::timestamptz[])
        AS t(session_id, client_message_id, dispatch_state, reason, item_id, resolved_at)
      WHERE j.session_id = t.session_id AND j.client_message_id = t.client_message_id)`;
}

/** Receipts minted by `accepted` settlements. */
function receiptRows(writes: readonly BatchWrites[]): Prisma.Sql | null {
  const receipts = each(writes, (write) => write.receipts);
  if (receipts.length === 0) return null;
  const values = receipts.map(
    ({ key, value: receipt }) => Prisma.sql`(${key.sessionId}, ${receipt.clientMessageId}, ${key.ownerId},
        ${key.accessId}, ${key.edgeId}::bigint, ${receipt.itemId}::text, ${receipt.epoch}, ${receipt.sequence}::bigint,
        ${receipt.acceptedAt}::timestamptz)`,
  );
  // Insert-or-ignore: a receipt, once minted, never moves.
  return Prisma.sql`receipts AS (
      INSERT INTO journal_receipts (session_id, client_message_id, owner_id, access_id, edge_id, item_id,
        epoch, sequence, accepted_at)
      VALUES ${Prisma.join(values)}
      ON CONFLICT DO NOTHING)`;
}

/**
 * The heads, which the main statement upserts: a new epoch's floor starts at 1, and a batch
 * without a snapshot row (window null) keeps the stored window.
 */
function heads(writes: readonly BatchWrites[]): Prisma.Sql {
  const rows = writes.map((write) => write.head);
  return Prisma.sql`heads AS (
    SELECT * FROM unnest(${keyArrays(writes)}, ${rows.map((head) => head.epoch)}::text[],
      ${rows.map((head) => head.sequence)}::bigint[], ${rows.map((head) => head.streamSequence)}::bigint[],
      ${rows.map((head) => head.fence)}::int[], ${rows.map((head) => head.window)}::int[],
      ${rows.map((head) => head.rolled)}::bool[])
      AS h(session_id, owner_id, access_id, edge_id, epoch, head_sequence, last_stream_seq, fence, "window", rolled))`;
}
