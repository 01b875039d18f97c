import { Inject, Injectable, Logger } from '@nestjs/common';
import { recordWatchAnswer, type BackgroundService } from '#telemetry';
import type { Subscription } from '@nats-io/transport-node';
import { Limits, type EdgeAgentRPCRequest, type EdgeAgentResult } from '#contracts';
import { decodeJson, NatsBus } from '#messaging';
import type { RouterConfig } from '../config.js';
import { EdgeLiveness } from '../common/edge-liveness.js';
import { EdgeRpcClient } from '../common/edge-rpc.client.js';
import { SESSION_ID_PATTERN, WATCH_WAITERS_MAX } from '../common/limits.js';
import { ROUTER_CONFIG } from '../common/tokens.js';
import { JournaledSnapshots } from '../journal-sequencer/journaled-snapshots.js';
import { RevisionWaiters } from './revision-waiters.js';
import { WatchBursts } from './watch-bursts.js';
import { WatchRepository } from './watch.repository.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `watch` waits here rather than on the edge (reference §2.3: up to 15 s for the revision to move),
 * so a waiting browser holds no edge RPC slot. Revisions move when an edge's session update is
 * stored (by any replica), which publishes a notice every replica hears on one wildcard
 * subscription.
 */
@Injectable()
export class WatchService implements BackgroundService {
  private readonly log = new Logger(WatchService.name);
  private readonly waiters = new RevisionWaiters();
  private readonly bursts = new WatchBursts(Limits.WATCH_COALESCE_MS);
  private subscription: Subscription | undefined;
  private closing = false;

  constructor(
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    private readonly bus: NatsBus,
    private readonly repository: WatchRepository,
    private readonly edge: EdgeRpcClient,
    private readonly liveness: EdgeLiveness,
    private readonly journaled: JournaledSnapshots,
  ) {}

  onApplicationBootstrap(): void {
    // Not in the queue group: every replica must hear every notice to wake its own waiters.
    this.subscription = this.bus.nc.subscribe(this.bus.subjects.revisionWildcard, {
      callback: (error, msg) => {
        if (error) {
          this.log.error(`Revision subscription failed: ${error.message}`);
          return;
        }
        const sessionId = this.bus.subjects.sessionIdOf(msg.subject);
        if (!sessionId) return;
        try {
          const notice = decodeJson<{ revision?: unknown }>(msg.data, msg.subject);
          if (typeof notice.revision === 'number') this.waiters.notify(sessionId, notice.revision);
        } catch {
          this.log.warn(`Ignored a malformed revision notice for session ${sessionId}.`);
        }
      },
    });
  }

  /** Watches waiting in this process right now. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Shutdown: answer every waiting watch now instead of holding the drain for the full wait. */
  release(): void {
    this.closing = true;
    this.waiters.wakeAll();
  }

  onModuleDestroy(): void {
    this.release();
    this.subscription?.unsubscribe();
  }

  async watch(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const sessionId = rpc.request.session_id;
    const cursor = Number(rpc.request.cursor ?? '');
    // Anything the router cannot reason about goes to the edge, which validates and waits natively.
    if (
      this.closing ||
      !sessionId ||
      !SESSION_ID_PATTERN.test(sessionId) ||
      !Number.isSafeInteger(cursor) ||
      cursor < 0 ||
      this.waiters.size >= WATCH_WAITERS_MAX
    ) {
      return this.edge.ask(rpc);
    }
    // Held from before the wait until the answer, so an update journaled meanwhile is kept.
    const release = this.journaled.hold(sessionId, cursor);
    try {
      const wokenBy = await this.waitPast(rpc, sessionId, cursor);
      if (wokenBy === 'ask_edge' || wokenBy === 'poll') {
        // The edge answers these (its own wait may take the full 15 s): nothing to keep for them.
        release();
        return await (wokenBy === 'poll' ? this.poll(rpc) : this.edge.ask(rpc));
      }
      // A timeout, an edge gone offline or a shutdown answers at once: nothing is bursting.
      if (wokenBy !== undefined) await this.coalesce(sessionId, cursor, wokenBy);
      const journaled = wokenBy === undefined ? null : this.fromJournal(rpc, sessionId, cursor);
      recordWatchAnswer(journaled ? 'journal' : 'edge');
      return journaled ?? (await this.poll(rpc));
    } finally {
      release();
    }
  }

  /**
   * Waits until the session's revision moves past `cursor`: the revision that woke it, undefined
   * when nothing moved (timeout, edge offline, shutdown), or where to go instead.
   */
  private async waitPast(
    rpc: EdgeAgentRPCRequest,
    sessionId: string,
    cursor: number,
  ): Promise<number | undefined | 'ask_edge' | 'poll'> {
    // Register before reading Redis, so a notice landing between the read and the wait is not missed.
    const waiter = this.waiters.register(sessionId, cursor);
    // An edge that dies or hangs meanwhile ends the wait: the poll then answers offline.
    const untrack = this.liveness.track(rpc.request.edge_id, () => waiter.wake());
    try {
      let stored;
      try {
        stored = await this.repository.revision(sessionId);
      } catch (error) {
        this.log.warn(
          `Revision of session ${sessionId} unreadable, the edge waits: ${(error as Error).message}`,
        );
        stored = null;
      }
      if (!stored) return 'ask_edge';
      if (stored.closed) return 'poll';
      // Already moved: no wait, but a client following a burst is still held to its window.
      if (stored.revision > cursor) return stored.revision;
      await waiter.wait(this.config.watchWaitMs);
      return waiter.revision();
    } finally {
      untrack();
      waiter.dispose();
    }
  }

  /**
   * The state this replica journaled past `cursor`, when it is the caller's to see: the edge sent
   * it with the update, so asking the edge again would return it (or a newer one) once more. The
   * scope is the edge's own check (owner and access of the session, and the edge that sent it);
   * anything else, a closed session included, is left to the edge's answer.
   */
  private fromJournal(rpc: EdgeAgentRPCRequest, sessionId: string, cursor: number): EdgeAgentResult | null {
    const journaled = this.journaled.newerThan(sessionId, cursor);
    if (
      !journaled ||
      journaled.owner !== rpc.actor_id ||
      journaled.edge !== rpc.request.edge_id ||
      journaled.access !== (rpc.request.access_id ?? '') ||
      journaled.snapshot.closed === true
    ) {
      return null;
    }
    return journaled.snapshot;
  }

  /** The first change after a quiet spell answers at once; a burst, once per window (watch-bursts.ts). */
  private async coalesce(sessionId: string, cursor: number, revision: number): Promise<void> {
    const delay = this.bursts.delayMs(sessionId, cursor);
    if (delay > 0 && !this.closing) await sleep(delay);
    this.bursts.release(sessionId, revision);
  }

  private poll(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const { cursor: _cursor, ...request } = rpc.request;
    return this.edge.ask({ ...rpc, request: { ...request, action: 'poll' } });
  }
}
