// Streams session changes to the router. Per session: one request in flight, and only the
// newest state waits behind it (a newer revision replaces an unsent older one), so updates are
// never reordered and the last state is never dropped. Failures retry with capped backoff until
// the router acks; a forgotten session's final state is retried like any other.
import { Inject, Injectable, Logger } from '@nestjs/common';
import { context, type Context } from '@opentelemetry/api';
import { toWire } from '#contracts';
import { requestService, NatsBus } from '#messaging';
import type { EdgeConfig } from '../config.js';
import { EDGE_CONFIG } from '../common/tokens.js';
import type { SessionChange, SessionChangeSink } from '../sessions/sessions.service.js';

/** The router acks once the journal holds the update; JetStream stores within this easily. */
export const SESSION_UPDATE_TIMEOUT_MS = 5_000;
/** Retry backoff: doubles from the first delay up to the cap, so a router outage costs little. */
export const SESSION_UPDATE_RETRY_FIRST_MS = 200;
export const SESSION_UPDATE_RETRY_MAX_MS = 10_000;
/** How long a send waits for an update in flight before asking the router again (`journaled`). */
export const HEDGE_AFTER_MS = 250;
/** Sessions whose last journaled revision is remembered; the oldest is forgotten beyond it. */
export const JOURNALED_REVISIONS_MAX = 10_000;

interface Entry {
  build: () => SessionChange;
  /** A change happened since the last snapshot was taken. */
  dirty: boolean;
  inFlight: boolean;
  failures: number;
  timer?: NodeJS.Timeout;
  /** The trace context of the newest change (a turn's), so its update joins the send's trace. */
  trace: Context;
}

@Injectable()
export class SessionUpdatesService implements SessionChangeSink {
  private readonly log = new Logger(SessionUpdatesService.name);
  private readonly entries = new Map<string, Entry>();
  private idleWaiters: (() => void)[] = [];
  /** The newest revision the router acked, per session (in the order they were last acked). */
  private readonly acked = new Map<string, number>();
  private readonly ackWaiters = new Map<string, Set<() => void>>();
  private stopped = false;

  constructor(
    private readonly bus: NatsBus,
    @Inject(EDGE_CONFIG) private readonly config: EdgeConfig,
  ) {}

  changed(sessionId: string, build: () => SessionChange): void {
    if (this.stopped) return;
    let entry = this.entries.get(sessionId);
    if (!entry) {
      entry = { build, dirty: true, inFlight: false, failures: 0, trace: context.active() };
      this.entries.set(sessionId, entry);
    }
    entry.build = build;
    entry.dirty = true;
    entry.trace = context.active();
    if (!entry.inFlight && !entry.timer) void this.send(sessionId, entry);
  }

  /**
   * Whether the router has journaled `revision` (or newer) of the session: known from its acks,
   * or awaited while an update is in flight, for at most `timeoutMs`. An update not acked within
   * HEDGE_AFTER_MS is asked again at once (the one in flight may sit on a router replica that
   * died, until its timeout): the router acks a repeated revision as a duplicate.
   */
  async journaled(sessionId: string, revision: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    if (await this.ackedBy(sessionId, revision, Date.now() + Math.min(HEDGE_AFTER_MS, timeoutMs)))
      return true;
    this.hedge(sessionId);
    return this.ackedBy(sessionId, revision, deadline);
  }

  private async ackedBy(sessionId: string, revision: number, deadline: number): Promise<boolean> {
    while ((this.acked.get(sessionId) ?? 0) < revision) {
      const left = deadline - Date.now();
      if (this.stopped || !this.entries.has(sessionId) || left <= 0) return false;
      await this.nextAck(sessionId, left);
    }
    return true;
  }

  /**
   * Sends the session's newest state now: a retry waiting out its backoff goes at once; beside
   * an update in flight, one more request goes out (the queue group routes it to a live
   * replica), whose ack counts like any other. The entry's own loop is left as it is.
   */
  private hedge(sessionId: string): void {
    const entry = this.entries.get(sessionId);
    if (!entry || this.stopped) return;
    if (entry.timer) {
      clearTimeout(entry.timer);
      entry.timer = undefined;
      void this.send(sessionId, entry);
      return;
    }
    const change = entry.build();
    void this.request(change, entry.trace).then(
      (acked) => {
        if (!acked || this.stopped) return;
        this.noteAck(sessionId, change.revision);
        this.wakeAckWaiters(sessionId);
      },
      () => undefined,
    );
  }

  private nextAck(sessionId: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.ackWaiters.get(sessionId) ?? new Set<() => void>();
      this.ackWaiters.set(sessionId, waiters);
      const wake = () => {
        clearTimeout(timer);
        waiters.delete(wake);
        if (waiters.size === 0) this.ackWaiters.delete(sessionId);
        resolve();
      };
      const timer = setTimeout(wake, timeoutMs);
      waiters.add(wake);
    });
  }

  /** Notes an acked revision and wakes whoever waits on the session. */
  private noteAck(sessionId: string, revision: number): void {
    const newest = Math.max(revision, this.acked.get(sessionId) ?? 0);
    this.acked.delete(sessionId);
    this.acked.set(sessionId, newest);
    if (this.acked.size > JOURNALED_REVISIONS_MAX) {
      const oldest = this.acked.keys().next().value;
      if (oldest !== undefined) this.acked.delete(oldest);
    }
  }

  private wakeAckWaiters(sessionId: string): void {
    for (const wake of [...(this.ackWaiters.get(sessionId) ?? [])]) wake();
  }

  /** Sessions with an update not yet acked. */
  get pending(): number {
    return this.entries.size;
  }

  private async send(sessionId: string, entry: Entry): Promise<void> {
    entry.inFlight = true;
    entry.dirty = false;
    const change = entry.build();
    let acked = false;
    try {
      acked = await this.request(change, entry.trace);
    } catch (error) {
      // The error names the subject and a code only; never the snapshot.
      this.log.warn(
        `Update ${change.revision} of session ${sessionId} was not acked: ${(error as Error).message}`,
      );
    }
    entry.inFlight = false;
    if (acked) {
      entry.failures = 0;
      this.noteAck(sessionId, change.revision);
    } else {
      // Retry with whatever is newest by then; the router treats a repeated revision as a duplicate.
      entry.dirty = true;
      entry.failures += 1;
    }
    if (this.stopped) return;
    if (!entry.dirty) {
      this.entries.delete(sessionId);
      this.wakeAckWaiters(sessionId);
      if (this.entries.size === 0) this.wakeIdle();
      return;
    }
    if (acked) {
      this.wakeAckWaiters(sessionId);
      void this.send(sessionId, entry);
      return;
    }
    const delay = Math.min(
      SESSION_UPDATE_RETRY_MAX_MS,
      SESSION_UPDATE_RETRY_FIRST_MS * 2 ** (entry.failures - 1),
    );
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (!this.stopped) void this.send(sessionId, entry);
    }, delay);
  }

  /** One update request; true when the router acked it (the journal holds that revision). */
  private async request(change: SessionChange, trace: Context): Promise<boolean> {
    const ack = await context.with(trace, () =>
      requestService(
        this.bus.nc,
        this.bus.subjects,
        'routerSessionUpdate',
        {
          ...change,
          snapshot: toWire(change.snapshot),
          edge_id: this.config.edgeId,
          edge_token: this.config.edgeToken,
        },
        { timeoutMs: SESSION_UPDATE_TIMEOUT_MS },
      ),
    );
    return ack.ok === true;
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Waits until every update is acked, or `timeoutMs` passed (shutdown). */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.entries.size === 0) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.entries.size === 0), timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  stop(): void {
    this.stopped = true;
    for (const entry of this.entries.values()) if (entry.timer) clearTimeout(entry.timer);
    if (this.entries.size > 0)
      this.log.warn(`${this.entries.size} session updates were not acked before shutdown.`);
    this.entries.clear();
    this.wakeIdle();
    for (const sessionId of [...this.ackWaiters.keys()]) this.wakeAckWaiters(sessionId);
  }
}
