// The fold archiving a display window once a row of a later one applies (invariant 9).
import { foldBatch } from './journal-fold.js';
import type { BatchReads, BatchRow, JournalStateView } from './journal-records.js';
import { KEY, bytes, reads, show, snapshot } from './journal-fold.spec-support.js';

describe('foldBatch archiving finished windows', () => {
  const state: JournalStateView = { epoch: 'e1', lastStreamSequence: 2n, fence: 0 };
  const pagesOf = (batch: BatchRow[], read: BatchReads) =>
    foldBatch(KEY, batch, { revision: 0n }, read, new Date()).writes?.pages;

  it('archives the window a later one follows, as its last row in the batch left it', () => {
    const batch = [
      snapshot({ sequence: 3, stream: 3, prev: 2 }, show('m:0'), 0),
      snapshot({ sequence: 4, stream: 4, prev: 3 }, show('m:0', 'm:1'), 0),
      snapshot({ sequence: 5, stream: 5, prev: 4 }, show('m:2'), 1),
      snapshot({ sequence: 6, stream: 6, prev: 5 }, show('m:2', 'm:3'), 1),
    ];
    expect(pagesOf(batch, { ...reads(state), window: 0 })).toEqual([
      { window: 0, revision: 4n, payload: bytes(104) },
    ]);
  });

  it('archives the stored window from the session row when the batch starts with a later one', () => {
    const storedPage = { window: 2, revision: 2n, payload: bytes(7) };
    const later = [snapshot({ sequence: 3, stream: 3, prev: 2 }, show('m:9'), 3)];
    expect(pagesOf(later, { ...reads(state), window: 2, storedPage })).toEqual([storedPage]);
    // The same window goes on: nothing is finished. A stored page of another window is not it.
    const same = [snapshot({ sequence: 3, stream: 3, prev: 2 }, show('m:9'), 2)];
    expect(pagesOf(same, { ...reads(state), window: 2, storedPage })).toEqual([]);
    expect(pagesOf(later, { ...reads(state), window: 1, storedPage })).toEqual([]);
  });

  it('archives nothing for rows that do not apply, nor without a known window', () => {
    const applied: JournalStateView = { epoch: 'e1', lastStreamSequence: 5n, fence: 0 };
    const duplicate = [snapshot({ sequence: 3, stream: 3, prev: 2 }, show('m:9'), 1)];
    expect(
      foldBatch(KEY, duplicate, { revision: 0n }, { ...reads(applied), window: 0 }, new Date()).writes,
    ).toBeNull();
    const first = [snapshot({ sequence: 1, stream: 1, prev: 0 }, show('m:0'), 4)];
    expect(pagesOf(first, reads())).toEqual([]);
  });
});
