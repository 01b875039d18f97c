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

/**
 * Inside a transaction: checks the access still exists for (owner, id, edge) and holds it (FOR
 * SHARE, so an access delete waits for this transaction), inserts the session row from `create`
 * when there is none (insert-or-ignore), then locks the row (FOR UPDATE) until commit.
 * `create` null means "do not create": a missing row is then reported as null.
 */
export async function lockLiveSession(
  tx: Prisma.TransactionClient,
  key: StoredSessionKey,
  create: Omit<Prisma.SessionHistoryCreateManyInput, keyof StoredSessionKey> | null,
): Promise<LockedSession | 'no_access' | null> {
  const access = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM agent_accesses
    WHERE id = ${key.accessId} AND owner_id = ${key.ownerId} AND edge_id = ${key.edgeId}
    FOR SHARE`;
  if (access.length === 0) return 'no_access';
  let inserted = false;
  if (create) {
    const created = await tx.sessionHistory.createMany({
      data: [{ ...key, ...create }],
      skipDuplicates: true,
    });
    inserted = created.count > 0;
  }
  const rows = await tx.$queryRaw<{ deleted: boolean; revision: bigint }[]>`
    SELECT deleted, revision FROM session_histories
    WHERE owner_id = ${key.ownerId} AND access_id = ${key.accessId}
      AND edge_id = ${key.edgeId} AND session_id = ${key.sessionId}
    FOR UPDATE`;
  const row = rows[0];
  if (!row) return null;
  return { inserted, deleted: row.deleted, revision: BigInt(row.revision) };
}
