/**
 * Groups work by session and runs it with bounded concurrency: at most one batch per session at a
 * time (a session's rows must apply in their stream order, so two transactions of one session
 * never race), at most `concurrency` batches overall (each holds one pooled connection). While a
 * session's batch runs, the messages that arrive for it queue up and form its next batch, so a
 * busy session's rows get written together instead of one transaction each.
 */
export class SessionBatcher<T> {
  private readonly queues = new Map<string, T[]>();
  /** Sessions with queued items and no batch running, in arrival order (fairness). */
  private readonly ready = new Set<string>();
  private readonly running = new Set<string>();
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly maxBatch: number,
    /** Must settle every item it is given (ack, nak or term); a rejection is only logged by it. */
    private readonly work: (session: string, items: T[]) => Promise<void>,
  ) {}

  push(session: string, item: T): void {
    let queue = this.queues.get(session);
    if (!queue) {
      queue = [];
      this.queues.set(session, queue);
    }
    queue.push(item);
    if (!this.running.has(session)) this.ready.add(session);
    this.pump();
  }

  /** Items queued but not started; they are removed and handed back (the caller releases them). */
  takeQueued(): T[] {
    const items: T[] = [];
    for (const [session, queue] of this.queues) {
      items.push(...queue);
      this.queues.delete(session);
    }
    this.ready.clear();
    return items;
  }

  /** Resolves once no batch is running. */
  idle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running.size < this.concurrency && this.ready.size > 0) {
      const session = this.ready.values().next().value as string;
      this.ready.delete(session);
      const queue = this.queues.get(session);
      if (!queue || queue.length === 0) continue;
      const items = queue.splice(0, this.maxBatch);
      if (queue.length === 0) this.queues.delete(session);
      this.running.add(session);
      void this.work(session, items)
        .catch(() => undefined)
        .finally(() => {
          this.running.delete(session);
          if (this.queues.has(session)) this.ready.add(session);
          this.pump();
          if (this.running.size === 0) {
            const waiters = this.idleWaiters;
            this.idleWaiters = [];
            for (const resolve of waiters) resolve();
          }
        });
    }
  }
}
