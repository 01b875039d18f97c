/** A FIFO async lock: actions that check and then change one session run one at a time. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => T | PromiseLike<T>): Promise<T> {
    const next = this.tail.then(work, work);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
