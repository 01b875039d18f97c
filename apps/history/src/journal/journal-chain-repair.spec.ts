import type { JournalMessage } from '#contracts';
import {
  forcedByWaiting,
  JournalChainRepair,
  REPAIR_HOPS_MAX,
  type StreamRow,
} from './journal-chain-repair.js';
import type { JournalChainRepository } from './journal-chain.repository.js';
import type { Delivery, JournalService } from './journal.service.js';

class Unstorable extends Error {}

/** A stream of one session's rows, each chained to the one before it, and a recording journal. */
function setUp(options: {
  rows: number;
  applied: number;
  lost?: number[];
  spoiled?: number[];
  foreign?: number[];
}) {
  const row = (seq: number, session = 's1') =>
    ({ session_id: session, prev_stream_seq: seq - 1, sequence: seq }) as unknown as JournalMessage;
  const persisted: { seq: number; force: boolean }[] = [];
  const repair = new JournalChainRepair(
    {
      read: (seq) =>
        Promise.resolve(
          seq > options.rows || options.lost?.includes(seq)
            ? null
            : { seq, subject: 's', data: new Uint8Array() },
        ),
      parse: ({ seq }: StreamRow) => {
        if (options.spoiled?.includes(seq)) throw new Unstorable();
        return row(seq, options.foreign?.includes(seq) ? 's2' : 's1');
      },
      isPermanent: (error) => error instanceof Unstorable,
    },
    {
      persist: (_message: JournalMessage, delivery: Delivery) => {
        persisted.push({ seq: delivery.streamSequence, force: delivery.force });
        return Promise.resolve('saved');
      },
    } as unknown as JournalService,
    { lastApplied: () => Promise.resolve(options.applied) } as unknown as JournalChainRepository,
  );
  return { repair, persisted, row };
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
