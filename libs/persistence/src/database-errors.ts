// Which database failures mean "Postgres cannot answer right now" (stopped, restarting, failing
// over, out of connections) rather than "this request is wrong". Callers answer the first kind
// as retryable (`unavailable`, HTTP 503) instead of an internal error: nothing was written that
// a retry cannot redo, since a failed transaction commits nothing.

/** Prisma's own codes for an unreachable, timed-out or closed server, and a pool that ran dry. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** Driver-adapter error kinds (Prisma 7 over `pg`) of the same meaning. */
const ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
  'TransactionAlreadyClosed',
]);
/** Postgres SQLSTATE classes: 08 connection exception, 57P operator intervention (shutdown). */
const SQLSTATE = /^(08|57P0[123]|53300)/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

interface AdapterCause {
  kind?: unknown;
  code?: unknown;
  originalCode?: unknown;
}

function adapterCause(error: object): AdapterCause | undefined {
  const meta = (error as { meta?: { driverAdapterError?: { cause?: AdapterCause } } }).meta;
  return meta?.driverAdapterError?.cause ?? (error as { cause?: AdapterCause }).cause;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (PRISMA_CODES.has(code) || SOCKET_CODES.has(code) || SQLSTATE.test(code)))
    return true;
  const cause = adapterCause(error);
  if (!cause) return false;
  if (typeof cause.kind === 'string' && ADAPTER_KINDS.has(cause.kind)) return true;
  const sqlstate = cause.originalCode ?? cause.code;
  if (typeof sqlstate === 'string' && (SQLSTATE.test(sqlstate) || SOCKET_CODES.has(sqlstate))) return true;
  // A pg error without an adapter wrapper (a raw query's pool) carries the socket error as cause.
  return cause !== error && isDatabaseUnavailable(cause);
}
