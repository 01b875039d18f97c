// Edge liveness for the calls that wait on an edge in this process (docs/reliability.md "Edge
// liveness"). A dead edge's RPC subscription vanishes with its connection (NATS answers "no
// responders" at once), but a hung one keeps it open and a call would wait for the full RPC
// timeout, and a watch for its full wait. So while anything here waits on an edge, its presence
// (kept in Redis by whichever replica records its heartbeats) is checked every few hundred ms,
// and the waiters are released the moment the edge is found offline. A presence that ran out is
// confirmed with a probe before anyone is told: an empty request on the edge's RPC subject, which
// every edge version answers at once (`invalid_request`, no session touched). "No responders"
// (the edge's connection is gone) or no answer within PROBE_TIMEOUT_MS (hung) is offline; an answer
// means only its heartbeat was late, and it stays online. An edge restarted faster than its
// presence runs out (a supervisor's quick restart) is online, but its old process took the calls
// waiting here with it: a heartbeat with a new boot id marks the restart (presence.repository.ts),
// and every call that began before the mark is released as if the edge had gone offline; a boot
// id other than the one this replica last read for the edge does the same when no mark was
// written (the old presence ran out before the new process's first heartbeat).
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { BackgroundService } from '#telemetry';
import type { RedisClient } from './redis-client.js';
import { NatsBus } from '#messaging';
import type { RouterConfig } from '../config.js';
import { RedisKeys } from './redis-keys.js';
import { REDIS, ROUTER_CONFIG } from './tokens.js';
import { isOffline, parsePresence, type PresenceRecord } from './presence-record.js';

/**
 * An edge this replica has never seen present gets this long before a missing presence counts as
 * offline: one default heartbeat and a margin, so a presence lost with Redis (a restart, a
 * FLUSHALL) is restored by the edge's next heartbeat before anyone is told it is offline.
 */
const UNSEEN_GRACE_MS = 1_500;
/** A call refused because its edge was just found offline is refused without asking for this long. */
const KNOWN_OFFLINE_MS = 1_000;
/** An edge that answers nothing for this long while its presence has run out is hung. */
const PROBE_TIMEOUT_MS = 500;
const EMPTY = new Uint8Array(0);
/**
 * Only calls that began this long before a restart mark are released: the mark is another
 * replica's clock, and an edge's new process takes far longer than this to boot, so a call made
 * to it between its start and the mark is never taken for one its old process held.
 */
const RESTART_MARGIN_MS = 250;

interface Tracked {
  /** Each waiting call's release, with when it began waiting (this router's clock). */
  callbacks: Map<() => void, number>;
  /** When the edge was last known present: its record's `seen_at`, or when tracking began. */
  lastSeenAt: number;
  /** How long after `lastSeenAt` a missing presence means offline. */
  graceMs: number;
  /** The boot id this replica last read in the edge's presence, and when it read it. */
  boot?: { id: string; readAt: number };
}

@Injectable()
export class EdgeLiveness implements BackgroundService {
  private readonly log = new Logger(EdgeLiveness.name);
  private readonly tracked = new Map<string, Tracked>();
  private readonly offlineAt = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    private readonly bus: NatsBus,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.check(), this.config.edgeLivenessCheckMs);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Edges with something waiting on them here right now. */
  get watched(): number {
    return this.tracked.size;
  }

  /**
   * True when a check in the last second found the edge offline and no heartbeat came since: a
   * new call need not be sent. Costs a Redis read only on that path, so an edge that is back is
   * asked again at once.
   */
  async isKnownOffline(edgeId: string): Promise<boolean> {
    const at = this.offlineAt.get(edgeId);
    if (at === undefined || Date.now() - at >= KNOWN_OFFLINE_MS) return false;
    try {
      const record = parsePresence(await this.redis.get(this.keys.presence(edgeId)));
      if (record && !record.leaving && record.seen_at > at) {
        this.offlineAt.delete(edgeId);
        return false;
      }
    } catch {
      // Redis away: keep the last judgement for the rest of its second.
    }
    return true;
  }

  /**
   * Calls `onOffline` once if the edge is found offline while tracked. The returned function stops
   * tracking and must be called on every path.
   */
  track(edgeId: string, onOffline: () => void): () => void {
    let entry = this.tracked.get(edgeId);
    if (!entry) {
      entry = { callbacks: new Map(), lastSeenAt: Date.now(), graceMs: UNSEEN_GRACE_MS };
      this.tracked.set(edgeId, entry);
    }
    const callback = () => onOffline();
    entry.callbacks.set(callback, Date.now());
    return () => {
      const current = this.tracked.get(edgeId);
      if (!current?.callbacks.delete(callback)) return;
      if (current.callbacks.size === 0) this.tracked.delete(edgeId);
    };
  }

  /** One round: every tracked edge's presence in one pipelined read, then release the offline ones. */
  async check(): Promise<void> {
    if (this.checking || this.tracked.size === 0) return this.prune();
    this.checking = true;
    try {
      const ids = [...this.tracked.keys()];
      // One GET per key, never MGET or a pipeline: presence keys of different edges live in
      // different Cluster slots (auto-pipelining still makes it one round trip per node).
      const [values, restarts] = await Promise.all([
        Promise.all(ids.map((id) => this.redis.get(this.keys.presence(id)))),
        Promise.all(ids.map((id) => this.redis.get(this.keys.restarted(id)))),
      ]);
      const now = Date.now();
      const records = values.map((value) => parsePresence(value ?? null));
      ids.forEach((id, index) => {
        const restartedAt = Number(restarts[index] ?? Number.NaN);
        if (restartedAt > 0) this.releaseBefore(id, restartedAt - RESTART_MARGIN_MS);
        this.noteBoot(id, records[index] ?? null, now);
      });
      await Promise.all(ids.map((id, index) => this.judge(id, records[index] ?? null, now)));
    } catch (error) {
      // Redis away: nobody can tell, so nobody is told offline; the RPC timeout still bounds calls.
      this.log.warn(`Edge liveness check skipped: ${(error as Error).message}`);
    } finally {
      this.checking = false;
      this.prune();
    }
  }

  /**
   * The restart this replica sees itself: a boot id other than the one it last read for the
   * edge. It covers the restart whose old presence ran out before the new process's first
   * heartbeat (no mark is written then, and the new process answers the probe). Calls that began
   * before the last read of the old boot id were made to the old process; later ones may be the
   * new process's, and are left to the other rules.
   */
  private noteBoot(edgeId: string, record: PresenceRecord | null, now: number): void {
    const entry = this.tracked.get(edgeId);
    const id = record?.boot_id;
    if (!entry || !id) return;
    const previous = entry.boot;
    entry.boot = { id, readAt: now };
    if (previous && previous.id !== id) this.releaseBefore(edgeId, previous.readAt);
  }

  /** Releases the calls on the edge that began waiting before `cutoff`: its old process held them. */
  private releaseBefore(edgeId: string, cutoff: number): void {
    const entry = this.tracked.get(edgeId);
    if (!entry) return;
    const released = [...entry.callbacks].filter(([, since]) => since < cutoff);
    if (released.length === 0) return;
    for (const [callback] of released) entry.callbacks.delete(callback);
    if (entry.callbacks.size === 0) this.tracked.delete(edgeId);
    this.log.log(`Edge ${edgeId} restarted; ${released.length} call(s) its old process held released.`);
    for (const [callback] of released) callback();
  }

  private async judge(edgeId: string, record: PresenceRecord | null, now: number): Promise<void> {
    const entry = this.tracked.get(edgeId);
    if (!entry) return;
    if (record && !record.leaving) {
      entry.lastSeenAt = Math.max(entry.lastSeenAt, record.seen_at);
      entry.graceMs = record.ttl_ms;
    }
    if (!isOffline(record, entry.lastSeenAt, entry.graceMs, now)) return;
    if (!record?.leaving && (await this.answers(edgeId))) {
      // Alive, its heartbeat late (or its presence lost with Redis): ask again after another grace.
      entry.lastSeenAt = Date.now();
      return;
    }
    if (this.tracked.get(edgeId) !== entry) return;
    this.offlineAt.set(edgeId, Date.now());
    this.tracked.delete(edgeId);
    this.log.log(`Edge ${edgeId} is offline; ${entry.callbacks.size} waiting call(s) released.`);
    for (const callback of entry.callbacks.keys()) callback();
  }

  /** The probe: any answer at all means the edge's process is there and reading its subject. */
  private async answers(edgeId: string): Promise<boolean> {
    try {
      await this.bus.nc.request(this.bus.subjects.edgeRpc(edgeId), EMPTY, { timeout: PROBE_TIMEOUT_MS });
      return true;
    } catch {
      return false;
    }
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, at] of this.offlineAt) if (now - at >= KNOWN_OFFLINE_MS) this.offlineAt.delete(id);
  }
}
