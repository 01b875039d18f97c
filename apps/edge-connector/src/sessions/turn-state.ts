// Which native turn a session's events may come from, and the running turn's clock and span
// (reference §3 "Notification mapping", §6 timing).
import type { AgentTurnTiming } from '#contracts';
import type { TurnTrace } from '#telemetry';

export interface SessionClock {
  /** Monotonic milliseconds (turn timing). */
  monotonic(): number;
  /** Wall clock, ms since the epoch (started_at, updated_at, emitted_at). */
  wall(): number;
}

export class TurnState {
  /** The running turn's native id, once the native side named it. */
  private id: string | undefined;
  /** The turn that ended last: its late events must not count for the next one. */
  private lastId: string | undefined;
  private started = 0;
  private currentTiming: AgentTurnTiming | null = null;
  /** The running turn's span; its context is the parent of the updates the turn causes. */
  private trace: TurnTrace | null = null;

  constructor(private readonly clock: SessionClock) {}

  get currentId(): string | undefined {
    return this.id;
  }

  get timing(): AgentTurnTiming | null {
    return this.currentTiming;
  }

  /** Starts the clock of a new turn; a span still open is superseded. */
  begin(trace: () => TurnTrace): void {
    this.id = undefined;
    this.started = this.clock.monotonic();
    this.currentTiming = {};
    this.endTrace('superseded');
    this.trace = trace();
  }

  /**
   * The native side accepted the turn that `timing` belongs to; false when that turn already
   * ended meanwhile. `live` says the session still runs it, so events may name it from now on.
   */
  dispatched(turnId: string, timing: AgentTurnTiming | null, live: boolean): boolean {
    if (timing !== this.currentTiming || !timing) return false;
    timing.dispatch_ms ??= this.elapsed();
    this.trace?.dispatched(timing.dispatch_ms);
    if (live && turnId !== this.lastId) this.id = turnId;
    return true;
  }

  /** Whether an event of `turnId` belongs to the running turn (the session checks it runs). */
  accepts(turnId: string): boolean {
    if (this.id !== undefined) return turnId === this.id;
    return turnId !== this.lastId;
  }

  /** A pending prompt of `turnId` may still be acted on in this turn. */
  matches(turnId: string): boolean {
    return this.id === undefined || turnId === this.id;
  }

  firstReply(): void {
    if (!this.currentTiming || this.currentTiming.first_reply_ms != null) return;
    this.currentTiming.first_reply_ms = this.elapsed();
    this.trace?.firstReply(this.currentTiming.first_reply_ms);
  }

  completed(turnId: string): void {
    if (this.currentTiming && this.currentTiming.finished_ms == null) {
      this.currentTiming.finished_ms = this.elapsed();
    }
    this.lastId = turnId;
    this.id = undefined;
  }

  /** The session closed: the turn it ran (if named) is over. */
  closed(): void {
    this.lastId = this.id ?? this.lastId;
  }

  /** Ends the turn's span with the final timing (metrics included); idempotent. */
  endTrace(status: string): void {
    this.trace?.finished(this.currentTiming, status);
    this.trace = null;
  }

  /** Runs `fn` inside the running turn's span, if there is one. */
  run(fn: () => void): void {
    if (this.trace) this.trace.run(fn);
    else fn();
  }

  /** Wait spans of approvals and inputs, by their view id. */
  waitStarted(kind: 'approval' | 'input', viewId: string): void {
    this.trace?.waitStarted(kind, viewId);
  }

  waitEnded(viewId: string): void {
    this.trace?.waitEnded(viewId);
  }

  private elapsed(): number {
    return Math.max(0, Math.round(this.clock.monotonic() - this.started));
  }
}
