// Shares one call among the callers of the same key without handing anyone an answer older than
// their question. Pure, so it is unit-tested alone.
//
// Joining a call already in flight would be cheaper, but that call may have been sent before the
// caller asked: a "fresh" authorization check (after a watch's wait, an SSE re-check) exists to
// see a revocation made while the caller waited, and any check must see a revocation the api was
// told about before it asked; an answer computed before the revocation would miss it. So a
// caller who finds a call in flight waits for the next one, which starts when the one in flight
// ends and serves everybody who asked meanwhile. Per key at most one call is in flight and one is
// queued, however many callers there are.

interface Entry<T> {
  current: Promise<T>;
  next?: Promise<T>;
}

const ignore = (): void => undefined;

export class NextCall<T> {
  private readonly byKey = new Map<string, Entry<T>>();

  /** Keys with a call in flight (bounded by the callers waiting). */
  get size(): number {
    return this.byKey.size;
  }

  /** The answer of a call of `key` that started at or after this moment. */
  run(key: string, call: () => Promise<T>): Promise<T> {
    const entry = this.byKey.get(key);
    if (!entry) return this.start(key, call);
    // Everyone who asks while `current` runs shares the call that starts once it has ended.
    entry.next ??= entry.current.then(ignore, ignore).then(() => this.start(key, call));
    return entry.next;
  }

  private start(key: string, call: () => Promise<T>): Promise<T> {
    let current: Promise<T>;
    try {
      current = call();
    } catch (error) {
      current = Promise.reject(error as Error);
    }
    const entry: Entry<T> = { current };
    this.byKey.set(key, entry);
    const settle = (): void => {
      // A queued call replaces this entry when it starts; otherwise the key is free again.
      if (!entry.next && this.byKey.get(key) === entry) this.byKey.delete(key);
    };
    current.then(settle, settle);
    return current;
  }
}
