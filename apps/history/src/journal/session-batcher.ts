/** One session's share of a unit of work: its queued items, in arrival order. */
export interface SessionItems<T> {
  session: string;
  items: T[];
}

/**
 * Groups work by session and runs it with bounded concurrency: at most one batch per session at a
 * time (a session's rows must apply in their stream order, so two transactions of one session
 * never race), at most `concurrency` units of work overall (each holds one pooled connection).
 * While a session's batch runs, the messages that arrive for it queue up and form its next
 * batch, so a busy session's rows get written together instead of one transaction each.
 *
 * A unit of work takes the queues of several ready sessions at once (up to `maxItems` items in
 * all, at most `maxBatch` of one session), so many quiet sessions with a row or two each share
 * one transaction instead of paying for one each. Ready sessions are shared out evenly between
 * the free slots, oldest first (fairness).
 */
export class SessionBatcher<T> {
  private readonly queues = new Map<string, T[]>();
  /** Sessions with queued items and no batch running, in arrival order (fairness). */
  private readonly ready = new Set<string>();
  private readonly running = new Set<string>();
  private units = 0;
  private pumpScheduled = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly maxBatch: number,
    private readonly maxItems: number,
    /** Must settle every item it is given (ack, nak or term); a rejection is only logged by it. */
    private readonly work: (batches: SessionItems<T>[]) => Promise<void>,
  ) {}

  push(session: string, item: T): void {
    let queue = this.queues.get(session);
    if (!queue) {
      queue = [];
      this.queues.set(session, queue);
    }
    queue.push(item);
    if (!this.running.has(session)) this.ready.add(session);
    // Started on the next turn of the event loop, not at once: the messages one pull delivered
    // all arrive in this turn, so they are shared out together instead of the first few taking
    // a transaction each.
    if (!this.pumpScheduled) {
      this.pumpScheduled = true;
      setImmediate(() => {
        this.pumpScheduled = false;
        this.pump();
      });
    }
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
    if (this.units === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.units < this.concurrency && this.ready.size > 0) {
      // Share the ready sessions out between the free slots rather than handing all to one.
      const share = Math.ceil(this.ready.size / (this.concurrency - this.units));
      const batches: SessionItems<T>[] = [];
      let taken = 0;
      for (const session of this.ready) {
        if (batches.length >= share || taken >= this.maxItems) break;
        this.ready.delete(session);
        const queue = this.queues.get(session);
        if (!queue || queue.length === 0) continue;
        const items = queue.splice(0, Math.min(this.maxBatch, Math.max(1, this.maxItems - taken)));
        if (queue.length === 0) this.queues.delete(session);
        this.running.add(session);
        batches.push({ session, items });
        taken += items.length;
      }
      if (batches.length === 0) continue;
      this.units++;
      void this.work(batches)
        .catch(() => undefined)
        .finally(() => {
          this.units--;
          for (const { session } of batches) {
            this.running.delete(session);
            if (this.queues.has(session)) this.ready.add(session);
          }
          this.pump();
          if (this.units === 0) {
            const waiters = this.idleWaiters;
            this.idleWaiters = [];
            for (const resolve of waiters) resolve();
          }
        });
    }
  }
}
