import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient } from '#persistence';
import { compactionFloor, type CompactionPolicy } from './compaction-policy.js';

/** What one session's compaction did. */
export type CompactionOutcome =
  /** Another writer (the journal consumer, another replica) holds the session: try next time. */
  | { kind: 'busy' }
  /** The policy keeps every row. */
  | { kind: 'kept' }
  | { kind: 'compacted'; floor: bigint; deleted: number };

interface StateRow {
  epoch: string;
  oldest_sequence: bigint;
}

interface LogRow {
  count: bigint;
  oldest: Date | null;
}

@Injectable()
export class JournalCompactionRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  /**
   * Up to `take` sessions after `after` (by id) whose current epoch spans more rows above its
   * floor than the trigger: a cheap pre-filter on the one state row per session; the exact row
   * count and ages are checked under the session's lock.
   */
  async candidates(after: string, trigger: number, take: number): Promise<string[]> {
    const rows = await this.db.$queryRaw<{ session_id: string }[]>`
      SELECT session_id FROM journal_states
      WHERE session_id > ${after} AND head_sequence - oldest_sequence + 1 > ${trigger}
      ORDER BY session_id
      LIMIT ${take}`;
    return rows.map((row) => row.session_id);
  }

  /**
   * Compacts one session's current epoch in its own short transaction, never inside a write:
   * the session's journal state row is locked with SKIP LOCKED, so a concurrent journal write or
   * another replica compacting the same session makes this one step aside instead of waiting.
   * Rows below the floor are deleted and the floor raised; items, submissions, receipts and
   * tombstones are reduced state and stay.
   */
  compact(sessionId: string, policy: CompactionPolicy, now: number): Promise<CompactionOutcome> {
    return this.db.$transaction(async (tx) => {
      const states = await tx.$queryRaw<StateRow[]>`
        SELECT epoch, oldest_sequence FROM journal_states WHERE session_id = ${sessionId}
        FOR UPDATE SKIP LOCKED`;
      const state = states[0];
      if (!state) return { kind: 'busy' };
      const { epoch } = state;
      const [log] = await tx.$queryRaw<LogRow[]>`
        SELECT count(*) AS count, min(recorded_at) AS oldest FROM journal
        WHERE session_id = ${sessionId} AND epoch = ${epoch} AND sequence IS NOT NULL`;
      if (!log?.oldest) return { kind: 'kept' };
      const [tail] = await tx.$queryRaw<{ sequence: bigint }[]>`
        SELECT sequence FROM journal
        WHERE session_id = ${sessionId} AND epoch = ${epoch} AND sequence IS NOT NULL
        ORDER BY sequence DESC OFFSET ${policy.minTailRows - 1} LIMIT 1`;
      const [recent] = await tx.$queryRaw<{ sequence: bigint | null }[]>`
        SELECT min(sequence) AS sequence FROM journal
        WHERE session_id = ${sessionId} AND epoch = ${epoch} AND sequence IS NOT NULL
          AND recorded_at > ${new Date(now - policy.retainTailMs)}`;
      const floor = compactionFloor(
        {
          count: Number(log.count),
          oldestRecordedAt: log.oldest.getTime(),
          tailStart: tail ? BigInt(tail.sequence) : null,
          recentStart: recent?.sequence == null ? null : BigInt(recent.sequence),
        },
        now,
        policy,
      );
      if (floor === null || floor <= BigInt(state.oldest_sequence)) return { kind: 'kept' };
      // SKIP LOCKED here too, so compaction never waits on anything: rows a concurrent delete of
      // the session (or its access) holds are going away with it anyway, and waiting for them
      // while holding the state row could deadlock with that delete.
      const deleted = await tx.$executeRaw`
        DELETE FROM journal WHERE id IN (
          SELECT id FROM journal
          WHERE session_id = ${sessionId} AND epoch = ${epoch} AND sequence < ${floor}
          FOR UPDATE SKIP LOCKED)`;
      await tx.$executeRaw`
        UPDATE journal_states SET oldest_sequence = GREATEST(oldest_sequence, ${floor})
        WHERE session_id = ${sessionId}`;
      return { kind: 'compacted', floor, deleted };
    });
  }
}
