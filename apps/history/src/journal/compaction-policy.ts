// The compaction policy of the reference (§1.10): the replayable row log stays bounded while the
// reduced state (items, submissions, receipts, tombstones) stays complete. Two hours of rows
// covers a phone that slept through a commute, the longest gap a client resumes from rather than
// reloads; 512 rows keep a quiet session replayable much longer than that.

export interface CompactionPolicy {
  /** Always keep at least this many rows. */
  minTailRows: number;
  /** Keep every row recorded within this many ms. */
  retainTailMs: number;
}

/** What the store knows about one epoch's sequenced rows. */
export interface RowLog {
  count: number;
  /** recorded_at of the oldest row, ms. */
  oldestRecordedAt: number;
  /** The sequence of the row `minTailRows` from the end (null when there are fewer rows). */
  tailStart: bigint | null;
  /** The first row recorded after now − retainTailMs (null when none is that recent). */
  recentStart: bigint | null;
}

/**
 * Runs only when there are more than 2 × minTailRows rows and the oldest is older than the
 * retention window: inside it, compaction would rewrite an identical log.
 */
export function shouldCompact(
  log: Pick<RowLog, 'count' | 'oldestRecordedAt'>,
  now: number,
  policy: CompactionPolicy,
): boolean {
  return log.count > 2 * policy.minTailRows && log.oldestRecordedAt < now - policy.retainTailMs;
}

/**
 * The new floor (the first retained row), or null when nothing is to be dropped. The tail starts
 * at whichever comes first: the row minTailRows from the end or the first recent row, so the
 * larger of the two tails is kept.
 */
export function compactionFloor(log: RowLog, now: number, policy: CompactionPolicy): bigint | null {
  if (!shouldCompact(log, now, policy) || log.tailStart === null) return null;
  if (log.recentStart !== null && log.recentStart < log.tailStart) return log.recentStart;
  return log.tailStart;
}
