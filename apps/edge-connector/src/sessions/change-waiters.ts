// The long polls (`watch`) waiting for a session's next revision. Each waiter removes itself
// when it ends, so an aborted or timed-out watch leaves nothing behind.
export class ChangeWaiters {
  private waiters = new Set<() => void>();

  /** Wakes everyone waiting now; a watch that starts during the wake waits for the next change. */
  wakeAll(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  /** Resolves at the next wake, after `timeoutMs`, or when `signal` aborts. */
  wait(timeoutMs: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolveWait) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolveWait();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }
}
