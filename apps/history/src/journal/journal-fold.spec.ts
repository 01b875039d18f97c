// The pure fold of the journal write path: each row's turn in its subject's order, and the writes
// a session's batch collapses to (items, journal rows, head, session row, submissions, receipts).
import { foldBatch, foldSubmission, takeTurn } from './journal-fold.js';
import type { Submission } from '#contracts';
import type { StoredItemState } from './journal-reducer.js';
import type { BatchRow, ReceiptWrite, SubmissionWrite } from './journal-records.js';
import type { StoredSubmissionState } from './submission-reducer.js';
import {
  FINGERPRINT,
  KEY,
  SYNCED,
  accepted,
  bytes,
  chain,
  edit,
  pending,
  position,
  reads,
  sealedCount,
  show,
  snapshot,
  submission,
  resetSealed,
} from './journal-fold.spec-support.js';

beforeEach(resetSealed);

describe('takeTurn', () => {
  const state = { epoch: 'e1', lastStreamSequence: 10n, fence: 3 };

  it('applies the first row of a session, and a row whose predecessor is the last applied', () => {
    expect(takeTurn(undefined, 'e1', position({ sequence: 1, stream: 4, prev: 0, fence: 2 }))).toEqual({
      kind: 'apply',
      rolled: false,
      state: { epoch: 'e1', lastStreamSequence: 4n, fence: 2 },
    });
    expect(takeTurn(state, 'e1', position({ sequence: 5, stream: 12, prev: 10 }))).toEqual({
      kind: 'apply',
      rolled: false,
      state: { epoch: 'e1', lastStreamSequence: 12n, fence: 3 },
    });
  });

  it('calls a message at or below the last applied stream sequence a duplicate, even when forced', () => {
    for (const stream of [10, 9]) {
      expect(takeTurn(state, 'e1', position({ sequence: 5, stream, prev: 8, force: true }))).toEqual({
        kind: 'duplicate',
      });
    }
  });

  it('holds back a row whose predecessor is not applied, unless forced (a gap)', () => {
    const gapped = position({ sequence: 6, stream: 14, prev: 12 });
    expect(takeTurn(state, 'e1', gapped)).toEqual({ kind: 'out_of_order' });
    expect(takeTurn(state, 'e1', { ...gapped, force: true })).toMatchObject({
      kind: 'apply',
      state: { lastStreamSequence: 14n },
    });
    // Without any state, only sequence 1 opens the chain.
    expect(takeTurn(undefined, 'e1', position({ sequence: 2, stream: 3, prev: 2 }))).toEqual({
      kind: 'out_of_order',
    });
  });

  it('opens a new epoch at sequence 1 whatever its predecessor, keeping the highest fence', () => {
    expect(takeTurn(state, 'e2', position({ sequence: 1, stream: 20, prev: 15, fence: 1 }))).toEqual({
      kind: 'apply',
      rolled: true,
      state: { epoch: 'e2', lastStreamSequence: 20n, fence: 3 },
    });
    expect(takeTurn(state, 'e2', position({ sequence: 2, stream: 20, prev: 15 }))).toEqual({
      kind: 'out_of_order',
    });
    // Sequence 1 again in the current epoch is no new epoch: it waits like any other row.
    expect(takeTurn(state, 'e1', position({ sequence: 1, stream: 20, prev: 15 }))).toEqual({
      kind: 'out_of_order',
    });
  });
});

describe('foldBatch', () => {
  it('applies rows in order: one head, one journal row each, items collapsed, the session row at the newest revision', () => {
    const rows = chain(3);
    const folded = foldBatch(KEY, rows, { revision: 1n }, reads(), SYNCED);

    expect(folded.outcomes).toEqual(['saved', 'saved', 'saved']);
    expect(folded.cleared).toBe(false);
    const writes = folded.writes!;
    expect(writes.head).toEqual({
      epoch: 'e1',
      sequence: 3n,
      streamSequence: 3n,
      fence: 0,
      rolled: false,
      window: 0,
    });
    expect(writes.journal.map((row) => [row.sequence, row.touched])).toEqual([
      [1n, ['m:0']],
      [2n, ['m:1']],
      [3n, ['m:2']],
    ]);
    // Every item is new: inserted once, at the position of the row that created it.
    expect(writes.changedItems).toEqual([]);
    expect(writes.freshItems.map((item) => [item.itemId, item.created?.sequence])).toEqual([
      ['m:0', 1n],
      ['m:1', 2n],
      ['m:2', 3n],
    ]);
    // Sealed once, for the newest row only.
    expect(writes.session).toMatchObject({ revision: 3n, payload: bytes(3), syncedAt: SYNCED });
    expect(sealedCount()).toBe(1);
  });

  it('never moves the session row back, nor writes one that does not exist', () => {
    expect(foldBatch(KEY, chain(2), { revision: 2n }, reads(), SYNCED).writes?.session).toBeNull();
    expect(foldBatch(KEY, chain(2), null, reads(), SYNCED).writes?.session).toBeNull();
    expect(sealedCount()).toBe(0);
  });
});

describe('foldBatch', () => {
  it('keeps an item created in the batch at its creation position through later edits and a tombstone', () => {
    const rows = [
      snapshot({ sequence: 1, stream: 1, prev: 0 }, show('m:0')),
      snapshot({ sequence: 2, stream: 2, prev: 1 }, edit('m:0')),
      snapshot({ sequence: 3, stream: 3, prev: 2 }, show()),
    ];
    const writes = foldBatch(KEY, rows, null, reads(), SYNCED).writes!;
    expect(writes.freshItems).toEqual([
      {
        itemId: 'm:0',
        revision: 3,
        body: null,
        digest: null,
        deleted: true,
        created: { sequence: 1n, ordinal: 0, observedAt: new Date(1_000) },
      },
    ]);
  });

  it('updates stored items in place, and moves a revived tombstone to its new position', () => {
    const stored: [string, StoredItemState][] = [
      ['m:0', { revision: 1, digest: 'd', deleted: false }],
      ['m:1', { revision: 4, digest: null, deleted: true }],
    ];
    const state = { epoch: 'e1', lastStreamSequence: 5n, fence: 0 };
    const rows = [
      snapshot({ sequence: 3, stream: 6, prev: 5 }, edit('m:0')),
      snapshot({ sequence: 4, stream: 7, prev: 6 }, show('m:0', 'm:1')),
    ];
    const writes = foldBatch(KEY, rows, { revision: 9n }, reads(state, stored), SYNCED).writes!;
    expect(writes.freshItems).toEqual([]);
    expect(writes.changedItems).toEqual([
      { itemId: 'm:0', revision: 2, body: bytes(2), digest: 'e2', deleted: false },
      {
        itemId: 'm:1',
        revision: 5,
        body: bytes(0),
        digest: 'd:m:1',
        deleted: false,
        created: { sequence: 4n, ordinal: 0, observedAt: new Date(7_000) },
      },
    ]);
  });
});

describe('foldBatch', () => {
  it('leaves duplicates unchanged: rows applied already, or given twice in one batch', () => {
    const rows = chain(3);
    const state = { epoch: 'e1', lastStreamSequence: 2n, fence: 0 };
    const folded = foldBatch(KEY, [...rows, rows[2]!], { revision: 2n }, reads(state), SYNCED);
    expect(folded.outcomes).toEqual(['unchanged', 'unchanged', 'saved', 'unchanged']);
    expect(folded.writes!.journal.map((row) => row.sequence)).toEqual([3n]);

    const again = foldBatch(KEY, rows, { revision: 3n }, reads({ ...state, lastStreamSequence: 3n }), SYNCED);
    expect(again).toEqual({
      outcomes: ['unchanged', 'unchanged', 'unchanged'],
      writes: null,
      cleared: false,
      page: expect.any(Function),
    });
    expect(again.page()).toBeNull();
  });

  it('holds back the rows chained after a missing one, while a forced row or a new epoch applies', () => {
    const state = { epoch: 'e1', lastStreamSequence: 1n, fence: 0 };
    const rows = [
      snapshot({ sequence: 3, stream: 3, prev: 2 }),
      snapshot({ sequence: 4, stream: 4, prev: 3 }),
      snapshot({ sequence: 1, stream: 5, prev: 4, epoch: 'e2' }, show('z:0')),
    ];
    const folded = foldBatch(KEY, rows, { revision: 1n }, reads(state), SYNCED);
    expect(folded.outcomes).toEqual(['out_of_order', 'out_of_order', 'saved']);
    expect(folded.writes!.journal.map((row) => [row.epoch, row.sequence])).toEqual([['e2', 1n]]);

    const forced = [snapshot({ sequence: 3, stream: 3, prev: 2, force: true }), rows[1]!];
    expect(foldBatch(KEY, forced, null, reads(state), SYNCED).outcomes).toEqual(['saved', 'saved']);
    const held = foldBatch(KEY, rows.slice(0, 2), null, reads(state), SYNCED);
    expect(held).toEqual({
      outcomes: ['out_of_order', 'out_of_order'],
      writes: null,
      cleared: false,
      page: expect.any(Function),
    });
    expect(held.page()).toBeNull();
  });
});

describe('foldBatch', () => {
  it('starts the items over on an epoch roll and carries the highest fence across it', () => {
    const stored: [string, StoredItemState][] = [['m:0', { revision: 1, digest: 'd', deleted: false }]];
    const state = { epoch: 'e1', lastStreamSequence: 1n, fence: 4 };
    const rows = [
      snapshot({ sequence: 2, stream: 2, prev: 1 }, show('m:0', 'm:1'), 1),
      snapshot({ sequence: 1, stream: 3, prev: 2, epoch: 'e2', fence: 2 }, show('z:0')),
    ];
    const folded = foldBatch(KEY, rows, { revision: 1n }, reads(state, stored), SYNCED);
    expect(folded.outcomes).toEqual(['saved', 'saved']);
    expect(folded.cleared).toBe(true);
    const writes = folded.writes!;
    // Nothing of the old epoch's items is written; the new epoch's item is inserted fresh.
    expect(writes.changedItems).toEqual([]);
    expect(writes.freshItems.map((item) => item.itemId)).toEqual(['z:0']);
    expect(writes.head).toEqual({
      epoch: 'e2',
      sequence: 1n,
      streamSequence: 3n,
      fence: 4,
      rolled: true,
      window: 0,
    });
    // Both rows' journal rows are kept: the old epoch's stays readable as it was.
    expect(writes.journal.map((row) => [row.epoch, row.sequence])).toEqual([
      ['e1', 2n],
      ['e2', 1n],
    ]);
  });

  it('keeps the stored window when the batch applies no snapshot row', () => {
    const rows = [submission({ sequence: 1, stream: 1, prev: 0 }, pending)];
    const writes = foldBatch(KEY, rows, null, reads(), SYNCED).writes!;
    expect(writes.head.window).toBeNull();
    expect(writes.journal).toEqual([
      {
        epoch: 'e1',
        revision: 1n,
        payload: null,
        recordedAt: new Date(1_000),
        sequence: 1n,
        touched: [],
        clientMessageId: pending.client_message_id,
      },
    ]);
  });
});

describe('settled submissions', () => {
  const id = pending.client_message_id;

  it('inserts a submission created and settled in one batch once, settled, with its receipt', () => {
    const rows = [
      submission({ sequence: 1, stream: 1, prev: 0 }, pending),
      submission({ sequence: 2, stream: 2, prev: 1 }, accepted),
    ];
    const writes = foldBatch(KEY, rows, null, reads(), SYNCED).writes!;
    expect(writes.submissions).toEqual([
      {
        kind: 'create',
        clientMessageId: id,
        epoch: 'e1',
        sequence: 1n,
        fence: 2,
        payloadFingerprint: FINGERPRINT,
        submittedAt: new Date(pending.submitted_at),
        settled: {
          dispatchState: 'accepted',
          reason: null,
          itemId: 'm:0:1',
          resolvedAt: new Date(accepted.resolved_at!),
        },
      },
    ]);
    expect(writes.receipts).toEqual([
      {
        clientMessageId: id,
        itemId: 'm:0:1',
        epoch: 'e1',
        sequence: 2n,
        acceptedAt: new Date(accepted.resolved_at!),
      },
    ]);
  });

  it('settles a stored submission once; a later row never reopens it, and the chain moves on anyway', () => {
    const stored: [string, StoredSubmissionState][] = [
      [id, { dispatchState: 'pending', payloadFingerprint: FINGERPRINT }],
    ];
    const rows = [
      submission({ sequence: 2, stream: 2, prev: 1 }, accepted),
      submission({ sequence: 3, stream: 3, prev: 2 }, { ...pending, dispatch_state: 'unknown' }),
    ];
    const state = { epoch: 'e1', lastStreamSequence: 1n, fence: 0 };
    const folded = foldBatch(KEY, rows, { revision: 1n }, reads(state, [], stored), SYNCED);
    expect(folded.outcomes).toEqual(['saved', 'saved']);
    expect(folded.writes!.submissions).toEqual([
      {
        kind: 'update',
        clientMessageId: id,
        settled: {
          dispatchState: 'accepted',
          reason: null,
          itemId: 'm:0:1',
          resolvedAt: new Date(accepted.resolved_at!),
        },
      },
    ]);
    expect(folded.writes!.receipts).toHaveLength(1);
    expect(folded.writes!.head.sequence).toBe(3n);
  });
});

describe('settled submissions', () => {
  const id = pending.client_message_id;

  it('ignores a settlement without its pending row and a row for another payload', () => {
    const known = new Map<string, StoredSubmissionState>();
    const writes = new Map<string, SubmissionWrite>();
    const receipts: ReceiptWrite[] = [];
    const record = (value: Submission) =>
      (submission({ sequence: 1, stream: 1, prev: 0 }, value) as Extract<BatchRow, { kind: 'submission' }>)
        .record;
    foldSubmission(record(accepted), known, writes, receipts);
    expect([known.size, writes.size, receipts.length]).toEqual([0, 0, 0]);

    foldSubmission(record(pending), known, writes, receipts);
    foldSubmission(record({ ...accepted, payload_fingerprint: 'e'.repeat(64) }), known, writes, receipts);
    expect(known.get(id)).toEqual({ dispatchState: 'pending', payloadFingerprint: FINGERPRINT });
    expect(writes.get(id)).toMatchObject({ kind: 'create', settled: { dispatchState: 'pending' } });
    expect(receipts).toEqual([]);
  });

  it('keeps submissions across an epoch roll: the receipt is minted at the new epoch position', () => {
    const rows = [
      submission({ sequence: 1, stream: 1, prev: 0 }, pending),
      submission({ sequence: 1, stream: 2, prev: 1, epoch: 'e2' }, accepted),
    ];
    const folded = foldBatch(KEY, rows, null, reads(), SYNCED);
    expect(folded.cleared).toBe(true);
    expect(folded.writes!.submissions).toEqual([
      expect.objectContaining({
        kind: 'create',
        epoch: 'e1',
        settled: expect.objectContaining({ dispatchState: 'accepted' }),
      }),
    ]);
    expect(folded.writes!.receipts).toEqual([expect.objectContaining({ epoch: 'e2', sequence: 1n })]);
  });
});
