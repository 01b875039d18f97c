import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { TooManyRequestsError } from '../common/errors.js';
import { API_CONFIG } from '../common/tokens.js';
import { USER_LIMITS_DEFAULTS, type ApiConfig, type UserLimitsConfig } from '../config.js';
import { Slots, TokenBuckets } from './token-bucket.js';

/**
 * What a refusal for a held resource (a stream, a watch) tells the client to wait: nothing says
 * when one of the caller's own streams or watches ends (a watch lasts at most 15 s).
 */
const HELD_RETRY_AFTER_S = 5;
/** Full buckets are dropped this often, so idle callers cost no memory. */
const SWEEP_INTERVAL_MS = 30_000;

/** Releases what a `hold` took; calling it again does nothing. */
export type Release = () => void;

/**
 * Per-user and per-edge limits of this api replica (docs/security.md "Limits per user"): a
 * request rate (token bucket), and the SSE streams and watches one user, or one edge's sessions,
 * may hold open at once. Over a limit the call is refused with 429 and `Retry-After` before it
 * costs anything downstream, so one user's flood is paid for by that user alone.
 */
@Injectable()
export class UserLimits implements OnModuleDestroy {
  private readonly userRate: TokenBuckets;
  private readonly edgeRate: TokenBuckets;
  private readonly userStreams: Slots;
  private readonly edgeStreams: Slots;
  private readonly userWatches: Slots;
  private readonly edgeWatches: Slots;
  private readonly sweeper: NodeJS.Timeout;

  constructor(@Inject(API_CONFIG) config: ApiConfig) {
    const limits: UserLimitsConfig = config.limits ?? USER_LIMITS_DEFAULTS;
    this.userRate = new TokenBuckets(limits.userRate);
    this.edgeRate = new TokenBuckets(limits.edgeRate);
    this.userStreams = new Slots(limits.userStreams);
    this.edgeStreams = new Slots(limits.edgeStreams);
    this.userWatches = new Slots(limits.userWatches);
    this.edgeWatches = new Slots(limits.edgeWatches);
    this.sweeper = setInterval(() => {
      this.userRate.sweep();
      this.edgeRate.sweep();
    }, SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  /** Every authenticated request of `actorId` takes one token of the user's rate. */
  admitRequest(actorId: string): void {
    const waitMs = this.userRate.take(actorId);
    if (waitMs > 0)
      throw new TooManyRequestsError(`Actor ${actorId} is over the request rate.`, seconds(waitMs));
  }

  /**
   * Whole seconds until `actorId` may call again, 0 when it may now. Takes nothing: the guard's
   * `admitRequest` still decides (and counts) every request that gets that far.
   */
  requestRetryAfter(actorId: string): number {
    const waitMs = this.userRate.wait(actorId);
    return waitMs > 0 ? seconds(waitMs) : 0;
  }

  /** Every edge action naming `edgeId` takes one token of the edge's rate. */
  admitEdgeRequest(edgeId: string): void {
    const waitMs = this.edgeRate.take(edgeId);
    if (waitMs > 0)
      throw new TooManyRequestsError(`Edge ${edgeId} is over the request rate.`, seconds(waitMs));
  }

  /** An SSE stream of `actorId` on a session of `edgeId`, held until the release. */
  openStream(actorId: string, edgeId: string): Release {
    return hold(this.userStreams, this.edgeStreams, actorId, edgeId, 'SSE streams');
  }

  /** A `watch` of `actorId` on `edgeId`, held until it answers. */
  startWatch(actorId: string, edgeId: string): Release {
    return hold(this.userWatches, this.edgeWatches, actorId, edgeId, 'watches');
  }
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

function hold(user: Slots, edge: Slots, actorId: string, edgeId: string, what: string): Release {
  if (!user.take(actorId)) {
    throw new TooManyRequestsError(`Actor ${actorId} holds ${user.max} ${what}.`, HELD_RETRY_AFTER_S);
  }
  if (!edge.take(edgeId)) {
    user.give(actorId);
    throw new TooManyRequestsError(`Edge ${edgeId} holds ${edge.max} ${what}.`, HELD_RETRY_AFTER_S);
  }
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    user.give(actorId);
    edge.give(edgeId);
  };
}
