// B6 flood: one user floods the api (2,000 SSE streams on one session and a burst of sends) while
// another user's `GET /api/v1/edge-agents/connectors` latency is measured, first on a quiet
// stack, then during the flood. The per-user limits run at their deployment defaults (or what
// `--service-env` sets, for an A/B run without them). Reported: the other user's p50/p95/p99
// quiet and flooded, their ratio, and what the flood got (streams and sends admitted / refused).
import type { BenchOptions } from './run.js';
import { USER_LIMITS_DEFAULTS } from '../apps/api/src/config.js';
import { runFlood, type FloodSpec } from './lib/flooder.js';
import { machineFacts, writeResult } from './lib/machine.js';
import { fixed, median, percentile, summarize, table, type LatencySummary } from './lib/stats.js';
import { BENCH_JWT_SECRET, BenchTether } from './lib/tether.js';
import { signToken } from '#test-support';

/** The flood of the issue: one user, 2,000 streams on one session, then a burst of sends. */
const FLOOD_STREAMS = 2_000;
const FLOOD_SENDS = 200;
/** Streams opened at once by the flooder (sockets, not requests per second). */
const STREAM_CONCURRENCY = 200;
/**
 * The other user's requests per phase: sequential and paced as a console would make them, well
 * inside that user's own rate (10 a second against 20), so only the flood can slow them.
 */
const VICTIM_REQUESTS = 200;
const VICTIM_REQUESTS_QUICK = 100;
const VICTIM_INTERVAL_MS = 100;
/** Quiet/flood pairs; the machine is shared, so the ratio reported is the median of the rounds. */
const ROUNDS = 3;
const ROUNDS_QUICK = 1;

/** The deployment defaults as environment: the bench stack otherwise turns the limits off. */
const DEFAULT_LIMITS_ENV: Record<string, string> = {
  TETHER_USER_RATE_PER_S: String(USER_LIMITS_DEFAULTS.userRate.perSecond),
  TETHER_USER_RATE_BURST: String(USER_LIMITS_DEFAULTS.userRate.burst),
  TETHER_EDGE_RATE_PER_S: String(USER_LIMITS_DEFAULTS.edgeRate.perSecond),
  TETHER_EDGE_RATE_BURST: String(USER_LIMITS_DEFAULTS.edgeRate.burst),
  TETHER_USER_SSE_STREAMS_MAX: String(USER_LIMITS_DEFAULTS.userStreams),
  TETHER_EDGE_SSE_STREAMS_MAX: String(USER_LIMITS_DEFAULTS.edgeStreams),
  TETHER_USER_WATCHES_MAX: String(USER_LIMITS_DEFAULTS.userWatches),
  TETHER_EDGE_WATCHES_MAX: String(USER_LIMITS_DEFAULTS.edgeWatches),
};

/** A phase's latencies: the usual summary plus the p95 the flood target is stated in. */
type Phase = LatencySummary & { p95: number };

function phase(samples: number[]): Phase {
  return { ...summarize(samples), p95: percentile(Float64Array.from(samples).sort(), 95) };
}

interface Outcomes {
  [status: string]: number;
}

function count(outcomes: Outcomes, status: number | string): void {
  outcomes[String(status)] = (outcomes[String(status)] ?? 0) + 1;
}

async function victimLatencies(
  apiUrl: string,
  token: string,
  requests: number,
  statuses: Outcomes,
): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < requests; i += 1) {
    const started = performance.now();
    const response = await fetch(`${apiUrl}/api/v1/edge-agents/connectors`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await response.arrayBuffer();
    const elapsed = performance.now() - started;
    samples.push(elapsed);
    count(statuses, response.status);
    if (elapsed < VICTIM_INTERVAL_MS)
      await new Promise((resolve) => setTimeout(resolve, VICTIM_INTERVAL_MS - elapsed));
  }
  return samples;
}

interface FloodResult {
  quiet: number[];
  flooded: number[];
  ratios: number[];
  quietStatuses: Outcomes;
  floodStatuses: Outcomes;
  streams: Outcomes;
  sends: Outcomes;
  floodSeconds: number[];
}

/** Between rounds: the flooder's rate bucket refills (60 tokens at 20 a second) and turns end. */
const SETTLE_MS = 6_000;

export async function flood(options: BenchOptions): Promise<void> {
  const victimRequests = options.quick ? VICTIM_REQUESTS_QUICK : VICTIM_REQUESTS;
  const rounds = options.quick ? ROUNDS_QUICK : ROUNDS;
  const tether = new BenchTether({
    label: 'benchflood',
    edge: true,
    script: {
      rules: [{ steps: [{ type: 'reply', text: 'flooded. '.repeat(20), deltas: 8, delay_ms: 20 }] }],
    },
    env: { ...DEFAULT_LIMITS_ENV, ...options.serviceEnv },
  });
  await tether.up();
  try {
    const api = tether.stack.apiUrl;
    const edgeId = tether.edge.id;
    const discovered = await tether.call<{ installations: { id: string; kind: string }[] }>(
      'POST',
      '/api/v1/edge-agents',
      { edge_id: edgeId, action: 'discover' },
    );
    const installationId = discovered.data.installations.find((item) => item.kind === 'scripted')!.id;
    const access = await tether.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
      name: 'flood',
      kind: 'scripted',
      edge_id: edgeId,
      installation_id: installationId,
      project: process.cwd(),
    });
    const started = await tether.call<{ session_id: string }>('POST', '/api/v1/edge-agents', {
      edge_id: edgeId,
      action: 'start',
      access_id: access.data.id,
      installation_id: installationId,
      project: process.cwd(),
    });
    const sessionId = started.data.session_id;
    const victim = await signToken(BENCH_JWT_SECRET, `victim${Date.now() % 100000}`);

    const url = `${api}/api/v1/sessions/${sessionId}/events?edge_id=${edgeId}&access_id=${access.data.id}`;
    const floodSpec: FloodSpec = {
      streamUrl: url,
      streams: FLOOD_STREAMS,
      concurrency: STREAM_CONCURRENCY,
      sendUrl: `${api}/api/v1/edge-agents`,
      sendBodies: Array.from({ length: FLOOD_SENDS }, (_, index) =>
        JSON.stringify({
          edge_id: edgeId,
          action: 'send',
          access_id: access.data.id,
          session_id: sessionId,
          text: `flood ${index}`,
        }),
      ),
      token: tether.token,
    };
    const merge = (into: Outcomes, from: Outcomes) => {
      for (const [status, n] of Object.entries(from)) into[status] = (into[status] ?? 0) + n;
    };

    await victimLatencies(api, victim, 20, {});
    const result: FloodResult = {
      quiet: [],
      flooded: [],
      ratios: [],
      quietStatuses: {},
      floodStatuses: {},
      streams: {},
      sends: {},
      floodSeconds: [],
    };
    for (let round = 0; round < rounds; round += 1) {
      const quiet = await victimLatencies(api, victim, victimRequests, result.quietStatuses);
      const started = performance.now();
      const flooding = runFlood(floodSpec);
      const flooded = await victimLatencies(api, victim, victimRequests, result.floodStatuses);
      const outcome = await flooding;
      merge(result.streams, outcome.streams);
      merge(result.sends, outcome.sends);
      result.floodSeconds.push((performance.now() - started) / 1000);
      result.quiet.push(...quiet);
      result.flooded.push(...flooded);
      result.ratios.push(phase(flooded).p95 / phase(quiet).p95);
      // The flooder's streams ended with its process; its buckets refill before the next round.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    }
    report(result, options);
  } finally {
    await tether.down();
  }
}

function report(r: FloodResult, options: BenchOptions): void {
  const quiet = phase(r.quiet);
  const flooded = phase(r.flooded);
  const row = (name: string, p: Phase, statuses: Outcomes) => [
    name,
    p.count,
    fixed(p.p50),
    fixed(p.p95),
    fixed(p.p99),
    fixed(p.max),
    JSON.stringify(statuses),
  ];
  console.log(
    table(
      ['phase', 'requests', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'statuses'],
      [row('quiet', quiet, r.quietStatuses), row('flood', flooded, r.floodStatuses)],
    ),
  );
  const ratio = median(r.ratios);
  console.log(
    `other user's p95 flooded / quiet: ${fixed(ratio)}x (median of ${r.ratios.length} rounds: ${r.ratios.map((x) => fixed(x)).join(', ')}; pooled ${fixed(flooded.p95 / quiet.p95)}x)`,
  );
  console.log(
    `flood per round: ${FLOOD_STREAMS} streams, ${FLOOD_SENDS} sends; all rounds: streams ${JSON.stringify(r.streams)}, sends ${JSON.stringify(r.sends)}; ${r.floodSeconds.map((x) => fixed(x, 1)).join(', ')} s`,
  );
  const path = writeResult('flood', machineFacts(), {
    service_env: options.serviceEnv,
    rounds: r.ratios.length,
    quiet,
    flooded,
    p95_ratio_median: ratio,
    p95_ratios: r.ratios,
    quiet_statuses: r.quietStatuses,
    flood_statuses: r.floodStatuses,
    streams: r.streams,
    sends: r.sends,
    flood_seconds: r.floodSeconds,
  });
  console.log(`written ${path}`);
}
