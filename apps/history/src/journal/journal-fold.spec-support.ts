// What the journal-fold specs build their rows, plans and reads from.
import type { Submission } from '#contracts';
import type { RenderBody, StoredItemState } from './journal-reducer.js';
import type { StoredSubmission } from '../journal-pages/journal-pages.sql.js';
import type {
  BatchReads,
  BatchRow,
  ItemCreation,
  ItemPlan,
  JournalStateView,
  PlainBody,
  RowPosition,
} from './journal-records.js';
import type { StoredSubmissionState } from './submission-reducer.js';

export const KEY = { ownerId: 'owner', accessId: 'a'.repeat(32), edgeId: 7n, sessionId: 'session' };
export const SYNCED = new Date(9_000);
export const FINGERPRINT = 'f'.repeat(64);
export const bytes = (value: number) => new Uint8Array([value]);

export interface At {
  sequence: number;
  stream: number;
  prev: number;
  epoch?: string;
  force?: boolean;
  fence?: number;
}

export function position(at: At): RowPosition {
  return {
    sequence: BigInt(at.sequence),
    streamSequence: BigInt(at.stream),
    prevStreamSequence: BigInt(at.prev),
    force: at.force ?? false,
    ...(at.fence === undefined ? {} : { fence: at.fence }),
  };
}

/** An assistant message's body in the clear, as a plan carries it. */
export function plain(text: string): PlainBody {
  const value: RenderBody = { type: 'message', role: 'assistant', text };
  return { value, bytes: Buffer.byteLength(JSON.stringify(value)) };
}

/** A plan that shows exactly `ids`: new (or tombstoned) ids are created, missing live ids tombstoned. */
export function show(...ids: string[]) {
  return (stored: ReadonlyMap<string, StoredItemState>): ItemPlan => {
    const fresh = ids.filter((id) => stored.get(id)?.deleted !== false);
    return {
      upserts: fresh.map((itemId, ordinal) => ({
        itemId,
        revision: (stored.get(itemId)?.revision ?? 0) + 1,
        ordinal,
        created: true,
        body: bytes(ordinal),
        plain: plain(itemId),
        digest: `d:${itemId}`,
      })),
      tombstones: [...stored]
        .filter(([id, item]) => !item.deleted && !ids.includes(id))
        .map(([itemId, item]) => ({ itemId, revision: item.revision + 1 })),
    };
  };
}

/** A plan that edits one stored item (a new body, the next revision, no new position). */
export function edit(itemId: string) {
  return (stored: ReadonlyMap<string, StoredItemState>): ItemPlan => {
    const revision = (stored.get(itemId)?.revision ?? 0) + 1;
    const upsert = {
      itemId,
      revision,
      ordinal: 0,
      created: false,
      body: bytes(revision),
      plain: plain(`${itemId}@${revision}`),
      digest: `e${revision}`,
    };
    return { upserts: [upsert], tombstones: [] };
  };
}

let sealed = 0;
/** How many session rows were sealed since the last reset (each test starts at 0). */
export const sealedCount = (): number => sealed;
export const resetSealed = (): void => {
  sealed = 0;
};
export function snapshot(
  at: At,
  plan: (stored: ReadonlyMap<string, StoredItemState>) => ItemPlan = show(),
  window = 0,
): BatchRow {
  const epoch = at.epoch ?? 'e1';
  return {
    kind: 'snapshot',
    record: {
      key: KEY,
      epoch,
      revision: BigInt(at.stream),
      running: false,
      closed: false,
      status: 'ok',
      recordedAt: new Date(at.stream * 1_000),
      journalPayload: bytes(at.stream),
      structured: { ...position(at), window, plan },
      sealSession: () => {
        sealed += 1;
        return { payload: bytes(at.stream), summary: bytes(0) };
      },
      sealPage: () => ({ window, revision: BigInt(at.stream), payload: bytes(100 + at.stream) }),
    },
  };
}

export const pending: Submission = {
  client_message_id: '1700000000000-' + '1'.repeat(32),
  fence: 2,
  payload_fingerprint: FINGERPRINT,
  dispatch_state: 'pending',
  submitted_at: 1_700_000_000_000,
};
export const accepted: Submission = {
  ...pending,
  dispatch_state: 'accepted',
  item_id: 'm:0:1',
  resolved_at: 1_700_000_001_000,
};

export function submission(at: At, value: Submission): BatchRow {
  return {
    kind: 'submission',
    record: {
      key: KEY,
      epoch: at.epoch ?? 'e1',
      revision: 1n,
      recordedAt: new Date(at.stream * 1_000),
      position: position(at),
      submission: value,
    },
  };
}

export function reads(
  state?: JournalStateView,
  items: [string, StoredItemState][] = [],
  submissions: [string, StoredSubmissionState][] = [],
  positions: [string, ItemCreation][] = [],
  storedSubmissions: StoredSubmission[] = [],
): BatchReads {
  return {
    state,
    items: new Map(items),
    positions: new Map(positions),
    submissions: new Map(submissions),
    storedSubmissions: new Map(storedSubmissions.map((stored) => [stored.clientMessageId, stored])),
  };
}

/** A chain of snapshot rows 1..n on stream sequences 1..n, each showing one more item. */
export function chain(n: number, epoch = 'e1'): BatchRow[] {
  return Array.from({ length: n }, (_, index) =>
    snapshot(
      { sequence: index + 1, stream: index + 1, prev: index, epoch },
      show(...Array.from({ length: index + 1 }, (_, item) => `m:${item}`)),
    ),
  );
}
