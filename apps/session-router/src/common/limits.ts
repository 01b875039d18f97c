// Router-only bounds. The contract's bounds live in libs/contracts/src/limits.ts.

/**
 * Waiting watches one router process keeps in memory. Each costs a closure and a timer; past this
 * the router lets the edge wait natively instead, so a flood of watches cannot exhaust a replica.
 */
export const WATCH_WAITERS_MAX = 20_000;

/** Due leases one reaper pass takes; the next pass (1 s later) takes the rest. */
export const LEASE_REAPER_BATCH = 100;
/**
 * A claimed lease is re-scored this far ahead before the edge is asked to expire it, so a replica
 * that dies mid-claim leaves it for another replica instead of losing it.
 */
export const LEASE_CLAIM_RETRY_MS = 30_000;
/** An offline edge is asked again this many times (LEASE_CLAIM_RETRY_MS apart), then the lease is dropped. */
export const LEASE_EXPIRE_ATTEMPTS_MAX = 20;
/** A running session is looked at again after this long (it never expires while a turn runs). */
export const LEASE_RUNNING_RECHECK_MS = 60_000;
/**
 * Redis session state (epoch, revision, meta) outlives the session's activity by this much; Redis
 * is a cache of the journal (docs/architecture.md invariant 2), so a key that ages out only costs an
 * epoch roll.
 */
export const SESSION_STATE_TTL_MS = 7 * 24 * 60 * 60_000;
/** Session ids become NATS subject tokens and Redis key parts; anything else is refused. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Edge ids become NATS subject tokens too. */
export const EDGE_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
