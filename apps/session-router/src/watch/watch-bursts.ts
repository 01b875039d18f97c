// When a woken `watch` may answer. Pure bookkeeping with an injected clock, so it is unit-tested
// alone.
//
// The reference waits a fixed 60 ms after every wake-up so that a burst of deltas lands in one
// reply. That pause is pure latency for the change that starts a burst, and for every change of
// a session that moves once a second (B2: +60 ms on every watch reply; B5: +60 ms on a watching
// client's first reply). Here the first change after a quiet spell is answered at once, and a
// client following a burst (its cursor already holds what the last release delivered) is answered
// at most once per window, at the end of it. A burst still costs one reply per window per client,
// plus the one at its start.

interface Release {
  /** When a woken watch of the session last went on to answer. */
  at: number;
  /** The revision whose notice released it: a cursor at or past it has seen that release. */
  revision: number;
}

/** Entries are swept once the map passes this size (and twice its size after each sweep). */
const SWEEP_FLOOR = 1024;

export class WatchBursts {
  private readonly released = new Map<string, Release>();
  private sweepAt = SWEEP_FLOOR;

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Sessions remembered right now (bounded by the sweep). */
  get size(): number {
    return this.released.size;
  }

  /**
   * How long a watch with `cursor`, woken by a notice, waits before it answers: nothing when the
   * session was quiet for a window or when the caller has not yet seen the last release (another
   * tab woken by the same notice); otherwise until the window after the last release ends.
   */
  delayMs(sessionId: string, cursor: number): number {
    const last = this.released.get(sessionId);
    if (!last || cursor < last.revision) return 0;
    return Math.max(0, last.at + this.windowMs - this.now());
  }

  /** A woken watch of the session answers now, for changes up to `revision`. */
  release(sessionId: string, revision: number): void {
    const at = this.now();
    const last = this.released.get(sessionId);
    // Notices may arrive out of order across replicas: a release within the window covers the
    // highest revision seen in it.
    const current = last && last.at + this.windowMs > at ? Math.max(revision, last.revision) : revision;
    this.released.set(sessionId, { at, revision: current });
    if (this.released.size > this.sweepAt) this.sweep(at);
  }

  /** Drops releases older than a window: they no longer delay anybody. */
  private sweep(now: number): void {
    for (const [sessionId, release] of this.released) {
      if (release.at + this.windowMs <= now) this.released.delete(sessionId);
    }
    this.sweepAt = Math.max(SWEEP_FLOOR, this.released.size * 2);
  }
}
