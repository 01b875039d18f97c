// The one way every writer of session rows (journal consumer, window archive, rename, delete)
// takes its lock, so they serialize on the row and a tombstone always wins.
import type { Prisma } from '#persistence';

/** The primary key of a stored session. */
export interface StoredSessionKey {
  ownerId: string;
  accessId: string;
  edgeId: bigint;
  sessionId: string;
}

export interface LockedSession {
  /** True when this call created the row from `create`. */
  inserted: boolean;
  deleted: boolean;
  revision: bigint;
}

type SessionCreate = Omit<Prisma.SessionHistoryCreateManyInput, keyof StoredSessionKey>;

/**
 * Inside a transaction: checks the access still exists for (owner, id, edge) and holds it (FOR
 * SHARE, so an access delete waits for this transaction), then locks the session row (FOR
 * UPDATE) until commit; when there is none it is inserted from `create` (insert-or-ignore, so a
 * concurrent insert wins harmlessly) and locked. `create` may be a function, called only when
 * the row is missing (it can be costly: ciphertexts). `create` null means "do not create": a
 * missing row is then reported as null.
 */
export async function lockLiveSession(
  tx: Prisma.TransactionClient,
  key: StoredSessionKey,
  create: SessionCreate | (() => SessionCreate) | null,
): Promise<LockedSession | 'no_access' | null> {
  const access = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM agent_accesses
    WHERE id = ${key.accessId} AND owner_id = ${key.ownerId} AND edge_id = ${key.edgeId}
    FOR SHARE`;
  if (access.length === 0) return 'no_access';
  // The row exists on every write but a session's first: lock it without an insert attempt.
  let row = await lockSessionRow(tx, key);
  let inserted = false;
  if (!row && create) {
    const created = await tx.sessionHistory.createMany({
      data: [{ ...key, ...(typeof create === 'function' ? create() : create) }],
      skipDuplicates: true,
    });
    inserted = created.count > 0;
    row = await lockSessionRow(tx, key);
  }
  if (!row) return null;
  return { inserted, ...row };
}

/** Locks the session row (FOR UPDATE) until commit; null when there is none. */
export async function lockSessionRow(
  tx: Prisma.TransactionClient,
  key: StoredSessionKey,
): Promise<{ deleted: boolean; revision: bigint } | null> {
  const rows = await tx.$queryRaw<{ deleted: boolean; revision: bigint }[]>`
    SELECT deleted, revision FROM session_histories
    WHERE owner_id = ${key.ownerId} AND access_id = ${key.accessId}
      AND edge_id = ${key.edgeId} AND session_id = ${key.sessionId}
    FOR UPDATE`;
  const row = rows[0];
  return row ? { deleted: row.deleted, revision: BigInt(row.revision) } : null;
}

/** What a tombstone sets: it keeps its key, revision and flags, never its content. */
export const TOMBSTONE = { deleted: true, closed: true, payload: null, summary: null, titleOverride: null };

/**
 * Inside a transaction: deletes everything stored for the sessions `where` selects besides
 * their rows — archived windows, journal rows, and the reduced journal state (items,
 * submissions, receipts) that goes with the rows it was folded from.
 */
export async function dropSessionContent(
  tx: Prisma.TransactionClient,
  where: Pick<StoredSessionKey, 'ownerId' | 'accessId'> & Partial<StoredSessionKey>,
): Promise<void> {
  await tx.sessionHistoryPage.deleteMany({ where });
  await tx.journalRow.deleteMany({ where });
  await tx.journalItem.deleteMany({ where });
  await tx.journalState.deleteMany({ where });
  await tx.journalSubmission.deleteMany({ where });
  await tx.journalReceipt.deleteMany({ where });
}
