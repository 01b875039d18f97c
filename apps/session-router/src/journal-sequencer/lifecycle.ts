import { Logger } from '@nestjs/common';
import {
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import type { RedisClient } from '../common/redis-client.js';
import {
  journalEntrySchema,
  sealedJournalEntrySchema,
  type EdgeAgentResult,
  type JournalEntry,
  type LifecycleEvent,
  type LifecycleEventData,
  type LifecycleEventType,
} from '#contracts';
import { decodeJson, encodeJson, withSendSpan, type JournalCipher, type NatsBus } from '#messaging';
import { SESSION_STATE_TTL_MS } from '../common/limits.js';
import { LuaScript } from '../common/lua-script.js';

/** How long the router waits for JetStream to store one lifecycle event. */
const LIFECYCLE_PUBLISH_TIMEOUT_MS = 5_000;
/**
 * A retried update republishes its row's events only while JetStream still remembers their ids
 * (the sessions stream's duplicate window is 2 minutes): older rows are left alone, so a very
 * late retry can never store an event twice.
 */
const LIFECYCLE_REPUBLISH_WINDOW_MS = 60_000;

/** What lifecycle derivation needs of a snapshot: flags and approval ids, no content. */
export interface LifecycleView {
  running: boolean;
  closed: boolean;
  expired: boolean;
  /** Pending approval id → its kind (when the agent names one). */
  approvals: Map<string, string | undefined>;
}

/** The journal row an event belongs to. */
export interface LifecycleRow {
  session_id: string;
  edge_id: string;
  actor_id: string;
  access_id?: string;
  epoch: string;
  sequence: number;
  at: number;
}

export function lifecycleView(snapshot: EdgeAgentResult): LifecycleView {
  const approvals = new Map<string, string | undefined>();
  for (const approval of snapshot.approvals ?? []) approvals.set(approval.id, approval.kind);
  return {
    running: snapshot.running === true,
    closed: snapshot.closed === true,
    expired: snapshot.status === 'expired',
    approvals,
  };
}

/**
 * The id (and JetStream message id) of an event: the row plus the type, plus the approval id for
 * approval events (one row may request or resolve several). Deterministic, so a retried update
 * republishes the same ids and JetStream's duplicate window drops the copies.
 */
export function lifecycleEventId(row: LifecycleRow, type: LifecycleEventType, subId?: string): string {
  const base = `${row.session_id}:${row.epoch}:${row.sequence}:${type}`;
  return subId === undefined ? base : `${base}:${subId}`;
}

/**
 * The lifecycle events one journal row causes, from the state of the previous row of the session
 * (`null` when this row is the session's first) and the row's snapshot, in a fixed order.
 */
export function deriveLifecycle(
  previous: LifecycleView | null,
  snapshot: EdgeAgentResult,
  row: LifecycleRow,
): LifecycleEvent[] {
  const next = lifecycleView(snapshot);
  const before: LifecycleView = previous ?? {
    running: false,
    closed: false,
    expired: false,
    approvals: new Map(),
  };
  const events: LifecycleEvent[] = [];
  const push = (type: LifecycleEventType, data: LifecycleEventData, subId?: string): void => {
    events.push({
      v: 1,
      id: lifecycleEventId(row, type, subId),
      type,
      session_id: row.session_id,
      edge_id: row.edge_id,
      actor_id: row.actor_id,
      ...(row.access_id ? { access_id: row.access_id } : {}),
      at: row.at,
      epoch: row.epoch,
      sequence: row.sequence,
      data,
    });
  };

  if (previous === null) push('session.started', {});
  if (!before.running && next.running) push('turn.started', {});
  for (const [id, kind] of next.approvals) {
    if (!before.approvals.has(id))
      push('approval.requested', { approval_id: id, ...(kind ? { approval_kind: kind } : {}) }, id);
  }
  for (const id of before.approvals.keys()) {
    if (!next.approvals.has(id)) push('approval.resolved', { approval_id: id }, id);
  }
  if (before.running && !next.running) {
    push('turn.completed', {
      status: snapshot.status,
      ...(snapshot.turn_timing ? { turn_timing: { ...snapshot.turn_timing } } : {}),
    });
  }
  if (!before.expired && next.expired) push('session.expired', { status: snapshot.status });
  if (!before.closed && next.closed) push('session.closed', {});
  return events;
}

/** Who deleted a session, as the router's delete (or discard) was asked for it. */
export interface DeletedSession {
  session_id: string;
  edge_id: string;
  actor_id: string;
  access_id?: string;
}

/**
 * `session.deleted`, placed at the session's journal head `(epoch, sequence)`: deletion is not a
 * journal row, so the event names the last row the session had. Its id is deterministic, so a
 * delete processed twice (racing replicas) stores it once.
 */
export function deletedEvent(
  session: DeletedSession,
  head: { epoch: string; sequence: number },
  at: number,
): LifecycleEvent {
  const row: LifecycleRow = { ...session, epoch: head.epoch, sequence: head.sequence, at };
  return {
    v: 1,
    id: lifecycleEventId(row, 'session.deleted'),
    type: 'session.deleted',
    session_id: session.session_id,
    edge_id: session.edge_id,
    actor_id: session.actor_id,
    ...(session.access_id ? { access_id: session.access_id } : {}),
    at,
    epoch: head.epoch,
    sequence: head.sequence,
    data: {},
  };
}

/** A read of the lifecycle cache under way (`prefetch`). */
export type CachedRead = Promise<CachedLifecycle | null>;

/** The lifecycle view of one journal row and of the row before it, as cached in Redis. */
interface CachedLifecycle {
  seq: number;
  view: StoredView;
  prev_seq: number;
  prev_view: StoredView | null;
}
interface StoredView {
  running: boolean;
  closed: boolean;
  expired: boolean;
  approvals: [string, string | null][];
}

function storedView(view: LifecycleView): StoredView {
  return { ...view, approvals: [...view.approvals].map(([id, kind]) => [id, kind ?? null]) };
}
function fromStored(stored: StoredView): LifecycleView {
  return { ...stored, approvals: new Map(stored.approvals.map(([id, kind]) => [id, kind ?? undefined])) };
}

/** Caches the view only forward (by stream sequence): a slow replica never overwrites a newer row. */
const CACHE_FORWARD = new LuaScript(`
local cached = redis.call('GET', KEYS[1])
if cached then
  local ok, decoded = pcall(cjson.decode, cached)
  if ok and type(decoded) == 'table' and tonumber(decoded.seq) and tonumber(decoded.seq) >= tonumber(ARGV[1]) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`);

/**
 * Publishes lifecycle events to `<ns>.session.<id>.lifecycle` (docs/events.md). The previous
 * row's view is cached in Redis next to the journal head, because pending approvals are live-only
 * and not in the journal; when the cache does not describe the previous row (Redis lost it, or a
 * racing replica), the journal row itself is read back and approvals are taken as none pending.
 */
export class LifecyclePublisher {
  private readonly log = new Logger(LifecyclePublisher.name);
  private readonly js: JetStreamClient;
  private jsm: Promise<JetStreamManager> | null = null;

  constructor(
    private readonly bus: NatsBus,
    private readonly redis: RedisClient,
    private readonly cipher: JournalCipher,
  ) {
    this.js = jetstream(bus.nc);
  }

  private key(sessionId: string): string {
    return `${this.bus.subjects.namespace}:{${sessionId}}:lifecycle`;
  }

  /**
   * Publishes the events of a row just stored at `(epoch, sequence)` and stream sequence
   * `streamSequence`, chained after stream sequence `previousStreamSequence` (0: the session's
   * first row). Throws when JetStream does not store an event, so the edge retries the update
   * and `republishLast` fills the gap.
   */
  async publishRow(
    row: LifecycleRow,
    snapshot: EdgeAgentResult,
    streamSequence: number,
    previousStreamSequence: number,
    /** The session's cache as `prefetch` read it before the row was appended. */
    prefetched: CachedRead,
  ): Promise<void> {
    // Used only when it names the previous row (`seq`), so a cache another writer moved since it
    // was read is never taken for it.
    const cached = await prefetched;
    const previous =
      previousStreamSequence === 0
        ? null
        : cached?.seq === previousStreamSequence
          ? fromStored(cached.view)
          : await this.viewAt(previousStreamSequence);
    const entry: CachedLifecycle = {
      seq: streamSequence,
      view: storedView(lifecycleView(snapshot)),
      prev_seq: previousStreamSequence,
      prev_view: previous && storedView(previous),
    };
    await CACHE_FORWARD.run(
      this.redis,
      [this.key(row.session_id)],
      [streamSequence, JSON.stringify(entry), SESSION_STATE_TTL_MS],
    );
    await this.publish(deriveLifecycle(previous, snapshot, row));
  }

  /**
   * A retried update whose row is already the session's last: publishes that row's events again
   * (JetStream drops the ones it already holds), so an event lost between storing the row and
   * publishing it is recovered by the edge's retry.
   */
  async republishLast(sessionId: string, streamSequence: number, revision: number): Promise<void> {
    if (streamSequence <= 0) return;
    const entry = await this.entryAt(streamSequence);
    if (
      !entry ||
      entry.session_id !== sessionId ||
      entry.revision !== revision ||
      entry.sequence === undefined ||
      entry.prev_stream_seq === undefined ||
      Date.now() - entry.recorded_at > LIFECYCLE_REPUBLISH_WINDOW_MS
    ) {
      return;
    }
    const row: LifecycleRow = {
      session_id: entry.session_id,
      edge_id: entry.edge_id,
      actor_id: entry.actor_id,
      ...(entry.access_id ? { access_id: entry.access_id } : {}),
      epoch: entry.epoch,
      sequence: entry.sequence,
      at: entry.recorded_at,
    };
    const cached = await this.cached(sessionId);
    // Only the cache knows the approvals of both rows; without it, leave the row alone rather
    // than guess and announce something twice.
    if (!cached || cached.seq !== streamSequence || cached.prev_seq !== entry.prev_stream_seq) return;
    const previous = cached.prev_view && fromStored(cached.prev_view);
    const snapshot: EdgeAgentResult = {
      ...entry.snapshot,
      approvals: cached.view.approvals.map(([id, kind]) => (kind === null ? { id } : { id, kind })),
    };
    await this.publish(deriveLifecycle(previous, snapshot, row));
  }

  /**
   * `session.deleted` once the tombstone is stored (docs/events.md). The head is the session's
   * last journal message, read from the stream (the truth; Redis only caches it). A session with
   * no sequenced row never had `session.started`, so nothing is announced for it and false is
   * returned. Throws when JetStream does not store the event.
   */
  async publishDeleted(session: DeletedSession, at: number): Promise<boolean> {
    const head = await this.lastEntry(session.session_id);
    if (!head || head.sequence === undefined || head.sequence < 1) return false;
    await this.publish([deletedEvent(session, { epoch: head.epoch, sequence: head.sequence }, at)]);
    return true;
  }

  private async publish(events: LifecycleEvent[]): Promise<void> {
    for (const event of events) {
      const subject = this.bus.subjects.sessionLifecycle(event.session_id);
      const body = encodeJson(event);
      await withSendSpan(subject, { messageId: event.id, bodySize: body.length }, (headers) =>
        this.js.publish(subject, body, { msgID: event.id, timeout: LIFECYCLE_PUBLISH_TIMEOUT_MS, headers }),
      );
    }
  }

  /**
   * The session's cached lifecycle, read now for a `publishRow` later: the sequencer asks for it
   * beside its first Redis read of an update, so the two share a round trip instead of the read
   * waiting until the row is stored. A failed read fails the `publishRow` that awaits it.
   */
  prefetch(sessionId: string): CachedRead {
    const read = this.cached(sessionId);
    // Awaited by publishRow, or dropped when the update needs no row (a retry): never unhandled.
    read.catch(() => undefined);
    return read;
  }

  private async cached(sessionId: string): Promise<CachedLifecycle | null> {
    const raw = await this.redis.get(this.key(sessionId));
    if (!raw) return null;
    try {
      return JSON.parse(raw) as CachedLifecycle;
    } catch {
      return null;
    }
  }

  /** The view of a journal row read back from the stream; approvals are not journaled. */
  private async viewAt(streamSequence: number): Promise<LifecycleView> {
    const entry = await this.entryAt(streamSequence);
    // An unreadable or vanished previous row: treat the session as known but idle, so
    // `session.started` is not announced twice.
    return entry
      ? lifecycleView(entry.snapshot)
      : { running: false, closed: false, expired: false, approvals: new Map() };
  }

  private async entryAt(streamSequence: number): Promise<JournalEntry | null> {
    return this.readEntry({ seq: streamSequence }, `stream sequence ${streamSequence}`);
  }

  /** The last message on the session's journal subject, or null when there is none. */
  private async lastEntry(sessionId: string): Promise<JournalEntry | null> {
    return this.readEntry(
      { last_by_subj: this.bus.subjects.sessionJournal(sessionId) },
      `the head of session ${sessionId}`,
    );
  }

  private async readEntry(
    query: { seq: number } | { last_by_subj: string },
    where: string,
  ): Promise<JournalEntry | null> {
    this.jsm ??= jetstreamManager(this.bus.nc);
    let message;
    try {
      message = await (await this.jsm).streams.getMessage(this.bus.subjects.sessionsStream, query);
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.NoMessageFound) {
        return null;
      }
      throw error;
    }
    if (!message) return null;
    try {
      const sealed = sealedJournalEntrySchema.safeParse(decodeJson(message.data, message.subject));
      const parsed = sealed.success ? journalEntrySchema.safeParse(this.cipher.open(sealed.data)) : sealed;
      if (parsed.success) return parsed.data;
    } catch {
      // Not JSON, or sealed under no key this router holds: handled below like any unreadable row.
    }
    this.log.warn(`Journal row at ${where} is unreadable; lifecycle assumes idle.`);
    return null;
  }
}
