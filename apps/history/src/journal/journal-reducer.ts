// The one reducer of a session's structured journal (reference §1.9): the live path and any
// rebuild fold rows through it. A row carries the session's whole snapshot, so the reducer
// derives render items from it and compares them with the stored state:
//
// - every message of the snapshot's display window is item `m:<window>:<index>`, every activity
//   is `a:<window>:<activity id>`; a message's index inside its window never changes, and a
//   window never reopens, so the ids are stable;
// - a new id is created at revision 1 with the row's sequence (its creation position, which
//   later revisions never move); a changed body takes the next revision; an unchanged body is
//   not touched;
// - an item of the snapshot's own window that the snapshot no longer shows is tombstoned at the
//   next revision (its body dropped, its revision kept so nothing lower can resurrect it). Items
//   of earlier windows are archived rounds, not deletions: they stay as they are.
import type { Activity, EdgeAgentResult, Message } from '#contracts';

export type RenderBody =
  ({ type: 'message' } & Message) | ({ type: 'activity' } & Omit<Activity, 'id'> & { activity_id: string });

export interface DerivedItem {
  itemId: string;
  body: RenderBody;
}

/** What the store knows about one item, without its content. */
export interface StoredItemState {
  revision: number;
  digest: string | null;
  deleted: boolean;
}

export interface ItemChange {
  itemId: string;
  revision: number;
  body: RenderBody;
  /** Position among the items this row created (stable display order inside one row). */
  ordinal: number;
  /** True when the id is new (or comes back after a tombstone): it takes this row's sequence. */
  created: boolean;
}

export interface Reduction {
  upserts: ItemChange[];
  tombstones: { itemId: string; revision: number }[];
}

export function windowOf(snapshot: EdgeAgentResult): number {
  return snapshot.window ?? 0;
}

export function deriveItems(snapshot: EdgeAgentResult): DerivedItem[] {
  const window = windowOf(snapshot);
  const items: DerivedItem[] = [];
  (snapshot.messages ?? []).forEach((message, index) => {
    items.push({ itemId: `m:${window}:${index}`, body: { type: 'message', ...message } });
  });
  for (const activity of snapshot.activities ?? []) {
    const { id, ...rest } = activity;
    // Encoded so an id can never break the item id's shape (or the cipher scope it is part of).
    items.push({
      itemId: `a:${window}:${encodeURIComponent(id)}`,
      body: { type: 'activity', activity_id: id, ...rest },
    });
  }
  return items;
}

/** True when the item id belongs to the given display window. */
export function inWindow(itemId: string, window: number): boolean {
  return itemId.startsWith(`m:${window}:`) || itemId.startsWith(`a:${window}:`);
}

/**
 * Folds one snapshot into the stored state. `digest` maps a body to the keyed digest the store
 * keeps, so equality is decided without decrypting anything.
 */
export function reduce(
  stored: ReadonlyMap<string, StoredItemState>,
  snapshot: EdgeAgentResult,
  digest: (itemId: string, body: RenderBody) => string,
): Reduction & { digests: Map<string, string> } {
  const window = windowOf(snapshot);
  const derived = deriveItems(snapshot);
  const seen = new Set<string>();
  const upserts: ItemChange[] = [];
  const digests = new Map<string, string>();
  let ordinal = 0;
  for (const item of derived) {
    if (seen.has(item.itemId)) continue; // a repeated activity id: the first one is the item
    seen.add(item.itemId);
    const bodyDigest = digest(item.itemId, item.body);
    const previous = stored.get(item.itemId);
    if (previous && !previous.deleted && previous.digest === bodyDigest) continue;
    const created = !previous || previous.deleted;
    digests.set(item.itemId, bodyDigest);
    upserts.push({
      itemId: item.itemId,
      revision: previous ? previous.revision + 1 : 1,
      body: item.body,
      ordinal: ordinal++,
      created,
    });
  }
  const tombstones: Reduction['tombstones'] = [];
  for (const [itemId, state] of stored) {
    if (state.deleted || seen.has(itemId) || !inWindow(itemId, window)) continue;
    tombstones.push({ itemId, revision: state.revision + 1 });
  }
  return { upserts, tombstones, digests };
}
