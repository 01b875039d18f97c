// Watches waiting in this process, by session. Pure bookkeeping, so it is unit-tested alone.

interface Waiter {
  cursor: number;
  wake: (revision?: number) => void;
}

export class RevisionWaiters {
  private readonly bySession = new Map<string, Set<Waiter>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /**
   * Registers a waiter for a revision above `cursor`. `wait(ms)` resolves true when woken, false
   * on timeout; `wake()` ends the wait early for another reason (its edge went offline);
   * `revision()` is the revision whose notice woke it (undefined for any other wake-up);
   * `dispose()` must be called on every path, and is idempotent.
   */
  register(
    sessionId: string,
    cursor: number,
  ): {
    wait: (ms: number) => Promise<boolean>;
    wake: () => void;
    revision: () => number | undefined;
    dispose: () => void;
  } {
    let wake!: (revision?: number) => void;
    let woken = false;
    let wokenBy: number | undefined;
    const wokenPromise = new Promise<void>((resolve) => {
      wake = (revision) => {
        if (!woken) wokenBy = revision;
        woken = true;
        resolve();
      };
    });
    const waiter: Waiter = { cursor, wake };
    let set = this.bySession.get(sessionId);
    if (!set) {
      set = new Set();
      this.bySession.set(sessionId, set);
    }
    set.add(waiter);
    this.count += 1;
    let disposed = false;
    const dispose = () => {
      if (disposed) return;
      disposed = true;
      const current = this.bySession.get(sessionId);
      if (current?.delete(waiter)) {
        this.count -= 1;
        if (current.size === 0) this.bySession.delete(sessionId);
      }
    };
    const wait = async (ms: number): Promise<boolean> => {
      if (woken) return true;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
      });
      try {
        await Promise.race([wokenPromise, timeout]);
      } finally {
        clearTimeout(timer);
      }
      return woken;
    };
    return { wait, wake: () => wake(), revision: () => wokenBy, dispose };
  }

  /** Wakes the session's waiters whose cursor is below `revision`. */
  notify(sessionId: string, revision: number): void {
    const set = this.bySession.get(sessionId);
    if (!set) return;
    for (const waiter of set) {
      if (revision > waiter.cursor) waiter.wake(revision);
    }
  }

  /** Wakes everyone (shutdown: answer now rather than hold the drain for the full wait). */
  wakeAll(): void {
    for (const set of this.bySession.values()) for (const waiter of set) waiter.wake();
  }
}
