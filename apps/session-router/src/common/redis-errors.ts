import { ServiceError, type OutageRule } from '#messaging';

/**
 * Replies and client errors that mean "Redis cannot answer right now" (a master failing over, a
 * Sentinel switch, a restart): the request changed nothing it cannot redo, so the caller is told
 * `unavailable` (retryable; the api answers 503) instead of `internal`.
 */
const TRANSIENT_REPLIES = /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING|READONLY|NOREPLICAS|BUSY)\b/;
const TRANSIENT_MESSAGES = [
  'Connection is closed.',
  'Too many Cluster redirections',
  "Cluster isn't ready",
  'Failed to refresh slots cache',
  'None of startup nodes is available',
  'All sentinels are unreachable',
  "Stream isn't writeable",
  'Reached the max retries per request limit',
];
const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

export function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'MaxRetriesPerRequestError') return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
  if (TRANSIENT_REPLIES.test(error.message)) return true;
  return TRANSIENT_MESSAGES.some((message) => error.message.includes(message));
}

export class SessionStateUnavailableError extends ServiceError {
  constructor() {
    super('unavailable', 'Session state is unavailable right now; retry shortly.');
  }
}

/** A Redis outage answers a router request `unavailable`, everything else as usual. */
export const REDIS_OUTAGE: OutageRule = {
  isOutage: isRedisUnavailable,
  describe: (exception) => `Redis unavailable (${(exception as Error).message})`,
  answer: () => new SessionStateUnavailableError(),
};
