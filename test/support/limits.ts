/**
 * The api's per-user limits out of the way, for suites and benchmarks that drive a storm as one
 * user on purpose (a retry storm, throughput runs); limits have their own suites and benchmark.
 * The router's ledger bound too: a session keeps at most 512 operation records for a day, and a
 * fault run sends more than that through each of its few sessions (its own suite,
 * operations.test.ts, checks the bound).
 */
export const LIMITS_OFF_ENV: Record<string, string> = {
  TETHER_USER_RATE_PER_S: '100000',
  TETHER_USER_RATE_BURST: '100000',
  TETHER_EDGE_RATE_PER_S: '100000',
  TETHER_EDGE_RATE_BURST: '100000',
  TETHER_USER_SSE_STREAMS_MAX: '100000',
  TETHER_EDGE_SSE_STREAMS_MAX: '100000',
  TETHER_USER_WATCHES_MAX: '100000',
  TETHER_EDGE_WATCHES_MAX: '100000',
  TETHER_OPERATIONS_PER_SESSION_MAX: '65536',
};
