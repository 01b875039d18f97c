// A run's claim on its operation is short and kept alive while the run lasts, so a replica that
// dies (SIGKILL, OOM, a lost node) leaves an operation that another replica takes over within one
// claim's length, not after the slowest run the claim once had to outlast.

/** Renews a claim this many times per claim length: two renewals may fail before it runs out. */
const RENEWALS_PER_CLAIM = 3;

/** The renewal interval for a claim of `claimMs`. */
export function renewalIntervalMs(claimMs: number): number {
  return Math.max(1, Math.floor(claimMs / RENEWALS_PER_CLAIM));
}

/**
 * Renews one claim every `everyMs` until stopped or until a renewal reports the claim is no
 * longer this run's (settled, or taken over: the run finds that out itself when it next writes).
 * A failed renewal (Redis unreachable) is reported and the next one is still tried: the claim
 * only runs out if the failures outlast it. One renewal at a time; the timer never holds the
 * process open.
 */
export class ClaimRenewal {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly renew: () => Promise<boolean>,
    private readonly everyMs: number,
    private readonly onError: (error: unknown) => void,
  ) {
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.tick(), this.everyMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      if (!(await this.renew())) this.stopped = true;
    } catch (error) {
      this.onError(error);
    }
    if (!this.stopped) this.schedule();
  }
}
