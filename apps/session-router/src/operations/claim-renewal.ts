// A run's claim on its operation is short and kept alive while the run lasts, so a replica that
// dies (SIGKILL, OOM, a lost node) leaves an operation that another replica takes over within one
// claim's length, not after the slowest run the claim once had to outlast.
import { PeriodicTask } from '#telemetry';

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
 * only runs out if the failures outlast it. The timer is the services' own PeriodicTask: one
 * renewal at a time, and it never holds the process open.
 */
export class ClaimRenewal {
  private readonly task: PeriodicTask;

  constructor(renew: () => Promise<boolean>, everyMs: number, onError: (error: unknown) => void) {
    this.task = new PeriodicTask({ name: 'router.claim-renewal', intervalMs: everyMs }, async () => {
      try {
        if (!(await renew())) this.stop();
      } catch (error) {
        onError(error);
      }
    });
    this.task.start();
  }

  /** No renewal starts after this; one already under way is left to finish (nobody waits on it). */
  stop(): void {
    void this.task.stop();
  }
}
