/**
 * Latency buckets, in seconds, for every request-sized duration (HTTP, NATS, database, message
 * processing): 1 ms steps for the NATS hops, up to the 15 s watch wait. A watch that waits its full
 * WATCH_WAIT_MS ends a few milliseconds after 15 s, so it falls into (15, 16]: quantiles over
 * watches read about 15 s, not an interpolation across a wide (10, 20] bucket. 30 s covers the
 * longest timeout (api → router).
 */
export const LATENCY_BUCKETS_S = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 16, 30,
];
