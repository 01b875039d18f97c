import { result } from '#contracts';
import { reduce, type RenderBody, type StoredItemState } from './journal-reducer.js';

const digest = (_id: string, body: RenderBody) => JSON.stringify(body);

function apply(stored: Map<string, StoredItemState>, snapshot: ReturnType<typeof result>) {
  const reduction = reduce(stored, snapshot, digest);
  for (const change of reduction.upserts) {
    stored.set(change.itemId, {
      revision: change.revision,
      digest: digest(change.itemId, change.body),
      deleted: false,
    });
  }
  for (const tomb of reduction.tombstones) {
    stored.set(tomb.itemId, { revision: tomb.revision, digest: null, deleted: true });
  }
  return reduction;
}

describe('journal reducer', () => {
  it('creates, revises, and leaves unchanged items untouched', () => {
    const stored = new Map<string, StoredItemState>();
    const first = apply(stored, result('ok', { messages: [{ role: 'user', text: 'hi' }] }));
    expect(first.upserts).toMatchObject([{ itemId: 'm:0:0', revision: 1, created: true }]);
    const second = apply(
      stored,
      result('ok', {
        messages: [
          { role: 'user', text: 'hi' },
          { role: 'assistant', text: 'he' },
        ],
      }),
    );
    expect(second.upserts).toMatchObject([{ itemId: 'm:0:1', revision: 1, created: true, ordinal: 0 }]);
    const third = apply(
      stored,
      result('ok', {
        messages: [
          { role: 'user', text: 'hi' },
          { role: 'assistant', text: 'hello' },
        ],
      }),
    );
    expect(third.upserts).toEqual([
      expect.objectContaining({ itemId: 'm:0:1', revision: 2, created: false }),
    ]);
    expect(third.tombstones).toEqual([]);
  });

  it('tombstones what vanished from the same window, never items of older windows', () => {
    const stored = new Map<string, StoredItemState>();
    apply(
      stored,
      result('ok', { messages: [{ role: 'user', text: 'a' }], activities: [{ id: 'x/1', kind: 'command' }] }),
    );
    expect(stored.has('a:0:x%2F1')).toBe(true);
    const gone = apply(stored, result('ok', { messages: [{ role: 'user', text: 'a' }] }));
    expect(gone.tombstones).toEqual([{ itemId: 'a:0:x%2F1', revision: 2 }]);
    // Window 1 starts empty: window 0's items are an archived round, not deletions.
    const next = apply(stored, result('ok', { window: 1, messages: [{ role: 'user', text: 'b' }] }));
    expect(next.tombstones).toEqual([]);
    expect(next.upserts).toMatchObject([{ itemId: 'm:1:0', revision: 1 }]);
    // A tombstoned id that comes back continues above its tombstone revision.
    const back = apply(stored, result('ok', { activities: [{ id: 'x/1', kind: 'command' }] }));
    expect(back.upserts).toMatchObject([{ itemId: 'a:0:x%2F1', revision: 3, created: true }]);
  });

  it('is idempotent: applying the same snapshot twice changes nothing the second time', () => {
    const stored = new Map<string, StoredItemState>();
    const snapshot = result('ok', { messages: [{ role: 'user', text: 'a' }, { role: 'assistant' }] });
    apply(stored, snapshot);
    expect(apply(stored, snapshot)).toMatchObject({ upserts: [], tombstones: [] });
  });
});
