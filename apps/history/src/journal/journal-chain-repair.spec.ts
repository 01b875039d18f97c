import type { JournalMessage } from '#contracts';
import {
  forcedByWaiting,
  JournalChainRepair,
  REPAIR_BATCH_MAX,
  REPAIR_HOPS_MAX,
  type StreamRow,
} from './journal-chain-repair.js';
import type { JournalChainRepository } from './journal-chain.repository.js';
import type { BatchEntry, JournalService } from './journal.service.js';

class Unstorable extends Error {}

/** A stream of one session's rows, each chained to the one before it, and a recording journal. */
function setUp(options: {
  rows: number;
  applied: number;
  lost?: number[];
  spoiled?: number[];
  foreign?: number[];
  /** Rows the database refuses for good. */
  refused?: number[];
  now?: () => number;
}) {
  const reads: number[] = [];
  const batches: number[] = [];
  const row = (seq: number, session = 's1') =>
    ({ session_id: session, prev_stream_seq: seq - 1, sequence: seq }) as unknown as JournalMessage;
  const persisted: { seq: number; force: boolean }[] = [];
  const repair = new JournalChainRepair(
    {
      read: (seq) => {
        reads.push(seq);
        return Promise.resolve(
          seq > options.rows || options.lost?.includes(seq)
            ? null
            : { seq, subject: 's', data: new Uint8Array() },
        );
      },
      parse: ({ seq }: StreamRow) => {
        if (options.spoiled?.includes(seq)) throw new Unstorable();
        return row(seq, options.foreign?.includes(seq) ? 's2' : 's1');
      },
      isPermanent: (error) => error instanceof Unstorable,
    },
    {
      persistBatch: (entries: BatchEntry[]) => {
        batches.push(entries.length);
        // As the database answers: after a refused row, the rows chained to it are out of order.
        let blocked = false;
        const outcomes = entries.map(({ delivery }) => {
          if (options.refused?.includes(delivery.streamSequence)) {
            blocked = true;
            return { unstorable: 'refused' };
          }
          if (blocked && !delivery.force) return 'out_of_order';
          blocked = false;
          persisted.push({ seq: delivery.streamSequence, force: delivery.force });
          return 'saved';
        });
        return Promise.resolve({ outcomes, pages: [] });
      },
    } as unknown as JournalService,
    { lastApplied: () => Promise.resolve(options.applied) } as unknown as JournalChainRepository,
    options.now,
  );
  return { repair, persisted, row, reads, batches };
}

describe('JournalChainRepair', () => {
  it('applies the missing rows oldest first, then leaves the row itself to apply normally', async () => {
    const { repair, persisted, row } = setUp({ rows: 10, applied: 6 });
    expect(await repair.fill(row(10))).toBe('ready');
    expect(persisted).toEqual([
      { seq: 7, force: false },
      { seq: 8, force: false },
      { seq: 9, force: false },
    ]);
  });

  it('reads nothing when the predecessor is applied already', async () => {
    const { repair, persisted, row } = setUp({ rows: 10, applied: 9 });
    expect(await repair.fill(row(10))).toBe('ready');
    expect(persisted).toEqual([]);
  });

  it('applies the oldest row it still finds as a gap when the stream lost the one before it', async () => {
    const { repair, persisted, row } = setUp({ rows: 10, applied: 5, lost: [7] });
    expect(await repair.fill(row(10))).toBe('ready');
    expect(persisted).toEqual([
      { seq: 8, force: true },
      { seq: 9, force: false },
    ]);
  });

  it('answers gap when the predecessor itself can never be stored', async () => {
    const { repair, persisted, row } = setUp({ rows: 10, applied: 5, spoiled: [9] });
    expect(await repair.fill(row(10))).toBe('gap');
    expect(persisted).toEqual([]);
  });

  it('applies a long hole in batches, oldest first', async () => {
    const missing = REPAIR_BATCH_MAX * 2 + 3;
    const { repair, persisted, row, batches } = setUp({ rows: missing + 11, applied: 10 });
    expect(await repair.fill(row(missing + 11))).toBe('ready');
    expect(batches).toEqual([REPAIR_BATCH_MAX, REPAIR_BATCH_MAX, 3]);
    expect(persisted.map(({ seq }) => seq)).toEqual(Array.from({ length: missing }, (_, i) => 11 + i));
    expect(persisted.every(({ force }) => !force)).toBe(true);
  });

  it('applies the row after one the database refuses as a gap, and the rest normally', async () => {
    const { repair, persisted, row } = setUp({ rows: 10, applied: 5, refused: [7] });
    expect(await repair.fill(row(10))).toBe('ready');
    expect(persisted).toEqual([
      { seq: 6, force: false },
      { seq: 8, force: true },
      { seq: 9, force: false },
    ]);
  });

  it('answers gap when the database refuses the predecessor itself', async () => {
    const { repair, row } = setUp({ rows: 10, applied: 5, refused: [9] });
    expect(await repair.fill(row(10))).toBe('gap');
  });

  it('never follows a link into another session', async () => {
    const { repair, persisted, row } = setUp({ rows: 10, applied: 5, foreign: [8] });
    expect(await repair.fill(row(10))).toBe('ready');
    expect(persisted).toEqual([{ seq: 9, force: true }]);
  });

  it('leaves a hole longer than one repair reads to redelivery, applying nothing', async () => {
    const rows = REPAIR_HOPS_MAX + 5;
    const { repair, persisted, row } = setUp({ rows, applied: 3 });
    expect(await repair.fill(row(rows))).toBe('too_far');
    expect(persisted).toEqual([]);
  });

  it('answers a later row of a hole it found too long without walking it again', async () => {
    const rows = REPAIR_HOPS_MAX + 50;
    const { repair, row, reads } = setUp({ rows, applied: 3 });
    expect(await repair.fill(row(rows - 10))).toBe('too_far');
    expect(reads).toHaveLength(REPAIR_HOPS_MAX);
    reads.length = 0;
    // Newer rows of the session: their holes hold the one just walked.
    expect(await repair.fill(row(rows - 10))).toBe('too_far');
    expect(await repair.fill(row(rows))).toBe('too_far');
    expect(reads).toEqual([]);
    // An older row's hole may be short enough: it is walked.
    expect(await repair.fill(row(rows - 11))).toBe('too_far');
    expect(reads).toHaveLength(REPAIR_HOPS_MAX);
  });

  it('walks a long hole again once the applied head passed where the last walk stopped', async () => {
    const rows = REPAIR_HOPS_MAX + 50;
    const options = { rows, applied: 3 };
    const { repair, row, reads, persisted } = setUp(options);
    expect(await repair.fill(row(rows))).toBe('too_far');
    options.applied = rows - REPAIR_HOPS_MAX;
    reads.length = 0;
    expect(await repair.fill(row(rows))).toBe('ready');
    // Walked, then each row read again as it is applied.
    expect(reads).toHaveLength(2 * (REPAIR_HOPS_MAX - 1));
    expect(persisted).toHaveLength(REPAIR_HOPS_MAX - 1);
  });

  it('walks a long hole again once its verdict is a few seconds old', async () => {
    const rows = REPAIR_HOPS_MAX + 50;
    let clock = 0;
    const { repair, row, reads } = setUp({ rows, applied: 3, now: () => clock });
    expect(await repair.fill(row(rows))).toBe('too_far');
    reads.length = 0;
    clock += 4_000;
    expect(await repair.fill(row(rows))).toBe('too_far');
    expect(reads).toEqual([]);
    clock += 2_000;
    expect(await repair.fill(row(rows))).toBe('too_far');
    expect(reads).toHaveLength(REPAIR_HOPS_MAX);
  });

  it('lets a transient failure through, for the caller to retry', async () => {
    const { row } = setUp({ rows: 10, applied: 5 });
    const repair = new JournalChainRepair(
      {
        read: () => Promise.reject(new Error('nats timeout')),
        parse: () => row(1),
        isPermanent: () => false,
      },
      {} as JournalService,
      { lastApplied: () => Promise.resolve(5) } as unknown as JournalChainRepository,
    );
    await expect(repair.fill(row(10))).rejects.toThrow('nats timeout');
  });
});

describe('forcedByWaiting', () => {
  it('never forces a chained row, however often it was delivered (a database outage redelivers it too)', () => {
    for (const deliveries of [1, 6, 7, 50])
      expect(forcedByWaiting({ prev_stream_seq: 41 }, deliveries)).toBe(false);
  });

  it('forces a row without a chain link after six deliveries, not before', () => {
    expect(forcedByWaiting({}, 5)).toBe(false);
    expect(forcedByWaiting({}, 6)).toBe(true);
  });
});
