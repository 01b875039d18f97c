import { compactionFloor, shouldCompact, type CompactionPolicy } from './compaction-policy.js';

const HOUR = 60 * 60_000;
const POLICY: CompactionPolicy = { minTailRows: 512, retainTailMs: 2 * HOUR };
const NOW = 100 * HOUR;

describe('journal compaction policy (reference §1.10)', () => {
  it('triggers only above 2 × minTailRows rows with the oldest older than the retention', () => {
    expect(shouldCompact({ count: 1024, oldestRecordedAt: NOW - 3 * HOUR }, NOW, POLICY)).toBe(false);
    expect(shouldCompact({ count: 1025, oldestRecordedAt: NOW - HOUR }, NOW, POLICY)).toBe(false);
    expect(shouldCompact({ count: 1025, oldestRecordedAt: NOW - 3 * HOUR }, NOW, POLICY)).toBe(true);
  });

  it('keeps the larger tail: the last 512 rows or every row of the last 2 h', () => {
    const old = { count: 2000, oldestRecordedAt: NOW - 5 * HOUR };
    // Nothing recent: the last 512 rows (1489..2000) stay.
    expect(compactionFloor({ ...old, tailStart: 1489n, recentStart: null }, NOW, POLICY)).toBe(1489n);
    // 800 recent rows: all of them stay.
    expect(compactionFloor({ ...old, tailStart: 1489n, recentStart: 1201n }, NOW, POLICY)).toBe(1201n);
    // Only 10 recent rows: still 512.
    expect(compactionFloor({ ...old, tailStart: 1489n, recentStart: 1991n }, NOW, POLICY)).toBe(1489n);
  });

  it('keeps everything when the trigger does not hold', () => {
    const young = { count: 2000, oldestRecordedAt: NOW - HOUR, tailStart: 1489n, recentStart: 1n };
    expect(compactionFloor(young, NOW, POLICY)).toBeNull();
  });
});
