// B6 flood: one user floods the api (2,000 SSE streams on one session and a burst of sends) while
// another user's `GET /api/v1/edge-agents/connectors` latency is measured, first on a quiet
// stack, then during the flood. The per-user limits run at their deployment defaults (or what
// `--service-env` sets, for an A/B run without them). Reported: the other user's p50/p95/p99
// quiet and flooded, their ratio, and what the flood got (streams and sends admitted / refused).
import { request } from 'node:http';
import type { BenchOptions } from './run.js';
import { USER_LIMITS_DEFAULTS } from '../apps/api/src/config.js';
import { machineFacts, writeResult } from './lib/machine.js';
import { fixed, percentile, summarize, table, type LatencySummary } from './lib/stats.js';
import { BENCH_JWT_SECRET, BenchTether } from './lib/tether.js';
import { signToken } from '#test-support';

/** The flood of the issue: one user, 2,000 streams on one session, then a burst of sends. */
const FLOOD_STREAMS = 2_000;
const FLOOD_SENDS = 200;
/** Streams opened at once by the flooder (sockets, not requests per second). */
const STREAM_CONCURRENCY = 200;
/** The other user's requests per phase (sequential, as a console would make them). */
const VICTIM_REQUESTS = 400;
const VICTIM_REQUESTS_QUICK = 100;

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

/** Opens one SSE stream; resolves with its status once the head arrived (the socket stays open). */
function openStream(url: string, token: string, open: (() => void)[]): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } },
      (res) => {
        resolve(res.statusCode ?? 0);
        if (res.statusCode === 200) {
          res.resume();
          open.push(() => res.destroy());
        } else {
          res.resume();
        }
      },
    );
    req.on('error', () => resolve(0));
    req.end();
  });
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
    samples.push(performance.now() - started);
    count(statuses, response.status);
  }
  return samples;
}

export async function flood(options: BenchOptions): Promise<void> {
  const victimRequests = options.quick ? VICTIM_REQUESTS_QUICK : VICTIM_REQUESTS;
  const tether = new BenchTether({
    label: 'benchflood',
    edge: true,
    script: {
      rules: [{ steps: [{ type: 'reply', text: 'flooded. '.repeat(20), deltas: 8, delay_ms: 20 }] }],
    },
    env: { ...DEFAULT_LIMITS_ENV, ...options.serviceEnv },
  });
  await tether.up();
  const open: (() => void)[] = [];
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

    // Warm-up, then the quiet phase.
    await victimLatencies(api, victim, 20, {});
    const quietStatuses: Outcomes = {};
    const quiet = phase(await victimLatencies(api, victim, victimRequests, quietStatuses));

    // The flood, and the victim measured while it runs.
    const streams: Outcomes = {};
    const sends: Outcomes = {};
    const floodStarted = performance.now();
    const url = `${api}/api/v1/sessions/${sessionId}/events?edge_id=${edgeId}&access_id=${access.data.id}`;
    let next = 0;
    const flooding = (async () => {
      await Promise.all(
        Array.from({ length: STREAM_CONCURRENCY }, async () => {
          while (next < FLOOD_STREAMS) {
            next += 1;
            count(streams, await openStream(url, tether.token, open));
          }
        }),
      );
      await Promise.all(
        Array.from({ length: FLOOD_SENDS }, async (_, index) => {
          const response = await fetch(`${api}/api/v1/edge-agents`, {
            method: 'POST',
            headers: { authorization: `Bearer ${tether.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              edge_id: edgeId,
              action: 'send',
              access_id: access.data.id,
              session_id: sessionId,
              text: `flood ${index}`,
            }),
          });
          await response.arrayBuffer();
          count(sends, response.status);
        }),
      );
    })();
    const floodStatuses: Outcomes = {};
    const flooded = phase(await victimLatencies(api, victim, victimRequests, floodStatuses));
    await flooding;
    const floodSeconds = (performance.now() - floodStarted) / 1000;

    report({ quiet, flooded, quietStatuses, floodStatuses, streams, sends, floodSeconds, options });
  } finally {
    for (const close of open) close();
    await tether.down();
  }
}

function report(r: {
  quiet: Phase;
  flooded: Phase;
  quietStatuses: Outcomes;
  floodStatuses: Outcomes;
  streams: Outcomes;
  sends: Outcomes;
  floodSeconds: number;
  options: BenchOptions;
}): void {
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
      [row('quiet', r.quiet, r.quietStatuses), row('flood', r.flooded, r.floodStatuses)],
    ),
  );
  console.log(`other user's p95 flooded / quiet: ${fixed(r.flooded.p95 / r.quiet.p95)}x`);
  console.log(
    `flood: ${FLOOD_STREAMS} streams ${JSON.stringify(r.streams)}, ${FLOOD_SENDS} sends ${JSON.stringify(r.sends)}, ${fixed(r.floodSeconds, 1)} s`,
  );
  const path = writeResult('flood', machineFacts(), {
    service_env: r.options.serviceEnv,
    quiet: r.quiet,
    flooded: r.flooded,
    p95_ratio: r.flooded.p95 / r.quiet.p95,
    quiet_statuses: r.quietStatuses,
    flood_statuses: r.floodStatuses,
    streams: r.streams,
    sends: r.sends,
    flood_seconds: r.floodSeconds,
  });
  console.log(`written ${path}`);
}
