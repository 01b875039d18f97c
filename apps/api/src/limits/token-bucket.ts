/** A rate as a token bucket: `perSecond` tokens refill continuously up to `burst`. */
export interface Rate {
  perSecond: number;
  burst: number;
}

interface Bucket {
  tokens: number;
  /** ms (monotonic) of the last refill. */
  at: number;
}

/**
 * Token buckets keyed by caller (a user, an edge). Idle buckets refill to full and are then no
 * different from a missing one, so the sweep drops them: memory follows the callers active in
 * the last few seconds, not every caller ever seen.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly rate: Rate,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes one token: 0 when granted, else the ms until one is available. */
  take(key: string): number {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.rate.burst, at: now };
    bucket.tokens = Math.min(
      this.rate.burst,
      bucket.tokens + ((now - bucket.at) / 1000) * this.rate.perSecond,
    );
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - bucket.tokens) / this.rate.perSecond) * 1000);
  }

  /** The ms until `key` could take a token (0: now), without taking one. */
  wait(key: string): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    const tokens = Math.min(
      this.rate.burst,
      bucket.tokens + ((this.now() - bucket.at) / 1000) * this.rate.perSecond,
    );
    return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) / this.rate.perSecond) * 1000);
  }

  /** Drops every bucket that has refilled to full (it would be recreated full). */
  sweep(): void {
    const now = this.now();
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.rate.perSecond >= this.rate.burst) {
        this.buckets.delete(key);
      }
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}

/** Counts of things held open per key (streams, watches), each bounded by `max`. */
export class Slots {
  private readonly held = new Map<string, number>();

  constructor(readonly max: number) {}

  /** Takes a slot: true when one was free. */
  take(key: string): boolean {
    const count = this.held.get(key) ?? 0;
    if (count >= this.max) return false;
    this.held.set(key, count + 1);
    return true;
  }

  give(key: string): void {
    const count = (this.held.get(key) ?? 0) - 1;
    if (count > 0) this.held.set(key, count);
    else this.held.delete(key);
  }

  count(key: string): number {
    return this.held.get(key) ?? 0;
  }
}
