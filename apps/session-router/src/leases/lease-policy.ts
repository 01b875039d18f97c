import { actionSpec, Limits } from '#contracts';

export interface LeaseTimes {
  saved: boolean;
  touched: number;
  created: number;
}

/**
 * When an idle lease falls due (reference §4): saved sessions after 30 min idle or 24 h of
 * runtime age, transient ones after 90 s idle or 30 min; whichever comes first.
 */
export function leaseDueAt({ saved, touched, created }: LeaseTimes): number {
  const idle = saved ? Limits.SAVED_SESSION_IDLE_MS : Limits.TRANSIENT_SESSION_IDLE_MS;
  const maxAge = saved ? Limits.SAVED_SESSION_MAX_AGE_MS : Limits.TRANSIENT_SESSION_MAX_AGE_MS;
  return Math.min(touched + idle, created + maxAge);
}

/**
 * Whether an action renews its session's lease: the action table's `renewsLease` (every user
 * action on a session, but not reads of catalogs nor the internal `snapshot`; reference §4).
 * A name the table lacks never gets this far (the decoders refuse it); it renews, as it did.
 */
export function renewsLease(action: string): boolean {
  return actionSpec(action)?.renewsLease ?? true;
}
