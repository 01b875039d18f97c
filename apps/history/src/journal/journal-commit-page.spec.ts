import { describe, expect, it } from '@jest/globals';
import { Limits, type JournalItem } from '#contracts';
import { byteLength } from '../journal-pages/after-page.js';
import { foldBatch } from './journal-fold.js';
import type { ItemPlan } from './journal-records.js';
import { bytes, KEY, plain, reads, snapshot, SYNCED } from './journal-fold.spec-support.js';

/** A first row that creates one assistant message per text. */
function firstRow(texts: string[]) {
  const plan = (): ItemPlan => ({
    upserts: texts.map((text, ordinal) => ({
      itemId: `m:0:${ordinal}`,
      revision: 1,
      ordinal,
      created: true,
      body: bytes(ordinal),
      plain: plain(text),
      digest: `d${ordinal}`,
    })),
    tombstones: [],
  });
  return snapshot({ sequence: 1, stream: 1, prev: 0 }, plan);
}

const pageOf = (texts: string[]) => foldBatch(KEY, [firstRow(texts)], null, reads(), SYNCED).page();

/** What the page read would count for these items: each serialised, plus the empty lists. */
const readSize = (items: JournalItem[]) =>
  items.reduce((sum, item) => sum + byteLength(item), byteLength([]) + byteLength([]));

describe('commitPage', () => {
  it('counts the bytes (not the characters) of bodies it never serialises, up to the page budget exactly', () => {
    // Four bodies of two-byte characters under the item bound, and one ASCII body that fills the
    // budget to the byte.
    const wide = Array.from({ length: 4 }, () => 'é'.repeat(30_000));
    const short = pageOf([...wide, '']);
    expect(short).not.toBeNull();
    const room = Limits.JOURNAL_PAGE_MAX_BYTES - readSize(short!.page.items);
    const exact = pageOf([...wide, 'a'.repeat(room)]);
    expect(exact).not.toBeNull();
    expect(readSize(exact!.page.items)).toBe(Limits.JOURNAL_PAGE_MAX_BYTES);
    // One byte more and the read would halve the window: the commit cuts no page.
    expect(pageOf([...wide, 'a'.repeat(room + 1)])).toBeNull();
  });

  it('shows a body over the item bound as a stand-in, as the read does', () => {
    const over = 'x'.repeat(Limits.JOURNAL_ITEM_MAX_BYTES);
    const page = pageOf(['fits', over]);
    expect(page?.page.items).toEqual([
      {
        itemId: 'm:0:0',
        revision: 1,
        sequence: 1,
        observedAt: 1_000,
        body: { type: 'message', role: 'assistant', text: 'fits' },
      },
      { itemId: 'm:0:1', revision: 1, sequence: 1, observedAt: 1_000, oversize: true },
    ]);
    expect(page).toMatchObject({ from: 0n, page: { hasOlder: false, hasNewer: false } });
  });

  it('cuts none for a batch that opens a new epoch or is forced past a gap', () => {
    const state = { epoch: 'e1', lastStreamSequence: 4n, fence: 0 };
    const roll = snapshot({ sequence: 1, stream: 5, prev: 4, epoch: 'e2' });
    const rolled = foldBatch(KEY, [roll], { revision: 4n }, reads(state), SYNCED);
    expect([rolled.outcomes, rolled.page()]).toEqual([['saved'], null]);
    const forced = snapshot({ sequence: 7, stream: 9, prev: 8, force: true });
    const gap = foldBatch(KEY, [forced], { revision: 4n }, reads(state), SYNCED);
    expect([gap.outcomes, gap.page()]).toEqual([['saved'], null]);
  });
});
