/**
 * The api's per-user limits out of the way, for suites and benchmarks that drive a storm as one
 * user on purpose (a retry storm, throughput runs); limits have their own suites and benchmark.
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
};
