// What scales each service, on the clustered set-up of docs/scaling.md: a 3-node NATS cluster
// (streams at 3 replicas), a Redis Cluster of 3 masters and 3 replicas, api ×2, router ×3,
// history ×2 and the real edge, all on this machine. A small machine cannot show N replicas doing
// N times the work (they share its cores), so the run measures what each unit of work costs each
// service, replica by replica, from which the capacity of one replica on one core follows:
//   1. polls through both api replicas (closed loop): CPU per poll of the api and router tiers,
//      and how the queue groups spread the polls over the replicas;
//   2. SSE streams held open on both api replicas: memory (RSS) per stream of an api replica;
//   3. a journal backlog drained by one history replica, then another by both (history stopped,
//      rows published on the 3-replica stream, history started): rows per second and CPU per row.
// Nothing here asserts timings; the figures go to docs/scaling.md.
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { startNatsCluster, type NatsCluster } from '../test/support/nats-cluster.js';
import { startRedisCluster, type RedisClusterHarness } from '../test/support/redis-cluster.js';
import { opaqueId } from './lib/fake-edge.js';
import { publishBacklog } from './lib/journal-backlog.js';
import { runLoad, type LoadResult } from './lib/loadgen.js';
import { cpuSecondsOf, machineFacts, rssOf, writeResult } from './lib/machine.js';
import { allOpened, startSseClients } from './lib/sse.js';
import { fixed, table } from './lib/stats.js';
import { BenchTether } from './lib/tether.js';
import { prepareSession, SCRIPT } from './relay.js';
import { CLUSTERED_REPLICAS, type ServiceName } from '../scripts/stack/launcher.js';
import type { BenchOptions } from './run.js';

/** Six Redis nodes from here (bus ports +10000), clear of the test suites' 7100–7400. */
const REDIS_BASE_PORT = 7500;
const POLL_CONCURRENCY_PER_API = 8;
/** SSE streams per load-generator process, and how many each process opens at once. */
const SSE_SPREAD = { perProcess: 1_000, openParallel: 16, openTimeoutMs: 60_000 };
const BACKLOG_ROWS_PER_SESSION = 40;
const DRAIN_TIMEOUT_MS = 120_000;
/** Stored rows are read this often (a read of the sessions' heads, not a count of the table). */
const DRAIN_SAMPLE_MS = 100;
const MiB = 1024 * 1024;

type Cpu = Map<ServiceName, number>;

function cpuOf(tether: BenchTether, names: ServiceName[]): Cpu {
  return new Map(names.map((name) => [name, cpuSecondsOf(tether.stack.pid(name)) ?? Number.NaN]));
}

/** CPU seconds each replica used between two snapshots. */
function cpuUsed(before: Cpu, after: Cpu): Map<ServiceName, number> {
  return new Map([...before].map(([name, at]) => [name, (after.get(name) ?? Number.NaN) - at]));
}

const tier = (used: Map<ServiceName, number>, prefix: string) =>
  [...used].filter(([name]) => name === prefix || name.startsWith(`${prefix}-`));
const sum = (entries: [ServiceName, number][]) => entries.reduce((total, [, value]) => total + value, 0);
const shares = (entries: [ServiceName, number][]) => {
  const total = sum(entries);
  return entries.map(([name, value]) => `${name} ${fixed((100 * value) / total, 0)} %`).join(', ');
};

interface PollFigures {
  polls: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  cpu_us_per_poll: { api: number; router: number; history: number; edge: number };
  split: { api: string; router: string };
}

/** Phase 1: closed-loop polls through both api replicas at once. */
async function polls(
  tether: BenchTether,
  body: Record<string, string>,
  quick: boolean,
): Promise<PollFigures> {
  const warmupMs = quick ? 1_000 : 3_000;
  const durationMs = quick ? 5_000 : 20_000;
  const names: ServiceName[] = [...CLUSTERED_REPLICAS, 'edge'];
  const before = cpuOf(tether, names);
  const results: LoadResult[] = await Promise.all(
    [tether.stack.apiUrl, tether.secondApiUrl!].map((apiUrl) =>
      runLoad({
        url: `${apiUrl}/api/v1/edge-agents`,
        headers: { authorization: `Bearer ${tether.token}` },
        bodies: [JSON.stringify(body)],
        concurrency: POLL_CONCURRENCY_PER_API,
        warmupMs,
        durationMs,
      }),
    ),
  );
  const used = cpuUsed(before, cpuOf(tether, names));
  // CPU was counted over warm-up and measurement: divide by the polls of both (approximately).
  const rps = results.reduce((total, result) => total + result.rps, 0);
  const polls = rps * ((warmupMs + durationMs) / 1000);
  const perPoll = (prefix: string) => Math.round((sum(tier(used, prefix)) * 1e6) / polls);
  return {
    polls: Math.round(polls),
    rps,
    p50_ms: Math.max(...results.map((result) => result.latency_ms.p50)),
    p99_ms: Math.max(...results.map((result) => result.latency_ms.p99)),
    errors: results.reduce((total, result) => total + result.errors, 0),
    cpu_us_per_poll: {
      api: perPoll('api'),
      router: perPoll('router'),
      history: perPoll('history'),
      edge: perPoll('edge'),
    },
    split: { api: shares(tier(used, 'api')), router: shares(tier(used, 'router')) },
  };
}

interface SseFigures {
  opened: number;
  failed: number;
  per_api: { name: ServiceName; rss_before_mib: number; rss_after_mib: number; kib_per_stream: number }[];
}

/** Phase 2: streams held open on both api replicas (half each); RSS of each before and after. */
async function streams(tether: BenchTether, sessionId: string, accessId: string, quick: boolean) {
  const perApi = quick ? 250 : 1_000;
  const rssBefore = (['api', 'api-2'] as const).map((name) => rssOf(tether.stack.pid(name)) ?? Number.NaN);
  const clients = [tether.stack.apiUrl, tether.secondApiUrl!].flatMap((apiUrl) =>
    startSseClients(tether, accessId, Array<string>(perApi).fill(sessionId), {
      ...SSE_SPREAD,
      measure: false,
      apiUrl,
    }),
  );
  try {
    const { opened, failed } = await allOpened(clients);
    // Let the api settle (buffers allocated, first pages sent) before reading memory.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const figures: SseFigures = {
      opened,
      failed,
      per_api: (['api', 'api-2'] as const).map((name, index) => {
        const after = rssOf(tether.stack.pid(name)) ?? Number.NaN;
        return {
          name,
          rss_before_mib: rssBefore[index]! / MiB,
          rss_after_mib: after / MiB,
          kib_per_stream: (after - rssBefore[index]!) / 1024 / perApi,
        };
      }),
    };
    return figures;
  } finally {
    await Promise.all(clients.map((client) => client.stop().catch(() => client.kill())));
  }
}

interface DrainFigures {
  /** History replicas that drained it. */
  replicas: number;
  rows: number;
  stored: number;
  drain_s: number;
  rows_per_s: number;
  cpu_ms_per_row: number;
  split: string;
}

/** Phase 3: both history replicas stopped, a backlog published, both started and timed. */
async function drain(
  tether: BenchTether,
  accessId: string,
  quick: boolean,
  historyReplicas: ServiceName[],
): Promise<DrainFigures> {
  const sessions = quick ? 64 : 512;
  // Fresh sessions per drain, so each starts from the same state.
  const round = historyReplicas.length;
  const sessionIds = Array.from({ length: sessions }, (_, index) => opaqueId(0x5ca1e + round, index));
  for (const name of ['history', 'history-2'] as const) await tether.stack.kill(name, 'SIGTERM');
  const nc = await connect({ servers: tether.stack.options.natsUrl.split(','), name: 'bench-scaling' });
  const db = new pg.Client({ connectionString: tether.databaseUrl });
  await db.connect();
  try {
    const backlog = await publishBacklog(nc, tether.stack.subjects, {
      sessionIds,
      rowsPerSession: BACKLOG_ROWS_PER_SESSION,
      edgeId: tether.edge.id,
      actorId: tether.owner,
      accessId,
    });
    const stored = async () =>
      Number(
        (
          await db.query<{ n: string | null }>(
            'SELECT sum(head_sequence) AS n FROM journal_states WHERE session_id = ANY($1::text[])',
            [sessionIds],
          )
        ).rows[0]?.n ?? 0,
      );
    for (const name of historyReplicas) await tether.stack.start(name);
    const deadline = performance.now() + DRAIN_TIMEOUT_MS;
    // Timed from the first stored row, so neither replica's boot counts as ingest.
    let first: { at: number; rows: number; cpu: Cpu } | undefined;
    let rows = 0;
    while (rows < backlog.rows && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, DRAIN_SAMPLE_MS));
      rows = await stored();
      if (!first && rows > 0) first = { at: performance.now(), rows, cpu: cpuOf(tether, historyReplicas) };
    }
    if (!first) throw new Error(`History stored no row of the backlog\n${tether.stack.output()}`);
    const seconds = (performance.now() - first.at) / 1000;
    const used = [...cpuUsed(first.cpu, cpuOf(tether, historyReplicas))];
    return {
      replicas: historyReplicas.length,
      rows: backlog.rows,
      stored: rows,
      drain_s: seconds,
      rows_per_s: (rows - first.rows) / seconds,
      cpu_ms_per_row: (sum(used) * 1000) / Math.max(rows - first.rows, 1),
      split: shares(used),
    };
  } finally {
    await db.end();
    await nc.close();
  }
}

/** The journal stream is replicated as production runs it; the edge's session gives the work. */
async function clusteredTether(options: BenchOptions, nats: NatsCluster, redis: RedisClusterHarness) {
  const tether = new BenchTether({
    label: 'benchscale',
    edge: true,
    script: SCRIPT,
    env: { ...options.serviceEnv, TETHER_JETSTREAM_REPLICAS: '3' },
    clustered: { natsUrl: nats.url, redisUrl: redis.url },
  });
  await tether.up();
  return tether;
}

export async function scaling(options: BenchOptions): Promise<void> {
  const machine = machineFacts();
  const [nats, redis] = await Promise.all([startNatsCluster(), startRedisCluster(REDIS_BASE_PORT)]);
  let tether: BenchTether | undefined;
  try {
    tether = await clusteredTether(options, nats, redis);
    console.log(
      'Scaling: 3 NATS nodes (R3 streams), Redis Cluster 3+3, api ×2, router ×3, history ×2, edge.',
    );
    const { body } = await prepareSession(tether);
    const pollFigures = await polls(tether, body, options.quick);
    console.log(`  polls: ${JSON.stringify(pollFigures)}`);
    const sseFigures = await streams(tether, body.session_id!, body.access_id!, options.quick);
    console.log(`  SSE: ${JSON.stringify(sseFigures)}`);
    // One replica, then two: what a second replica adds when the rows of a session are pulled by
    // either (the durable is shared, so one session's rows interleave between the replicas).
    const drains: DrainFigures[] = [];
    for (const replicas of [['history'], ['history', 'history-2']] as ServiceName[][]) {
      drains.push(await drain(tether, body.access_id!, options.quick, replicas));
      console.log(`  drain (${replicas.join(' + ')}): ${JSON.stringify(drains.at(-1))}`);
    }
    report(machine, pollFigures, sseFigures, drains);
  } finally {
    await tether?.down();
    await Promise.allSettled([nats.stop(), redis.stop()]);
  }
}

function report(
  machine: ReturnType<typeof machineFacts>,
  poll: PollFigures,
  sse: SseFigures,
  drains: DrainFigures[],
): void {
  const perCore = (cpuUs: number) => fixed(1e6 / cpuUs, 0);
  console.log(
    table(
      ['service', 'unit of work', 'cost per unit', 'per core (units/s)', 'spread over replicas'],
      [
        [
          'api',
          'poll',
          `${poll.cpu_us_per_poll.api} µs CPU`,
          perCore(poll.cpu_us_per_poll.api),
          poll.split.api,
        ],
        [
          'session-router',
          'poll',
          `${poll.cpu_us_per_poll.router} µs CPU`,
          perCore(poll.cpu_us_per_poll.router),
          poll.split.router,
        ],
        ...sse.per_api.map((api) => [
          api.name,
          'open SSE stream',
          `${fixed(api.kib_per_stream, 1)} KiB RSS`,
          '–',
          '–',
        ]),
        ...drains.map((drained) => [
          `history ×${drained.replicas}`,
          'journal row',
          `${fixed(drained.cpu_ms_per_row, 3)} ms CPU`,
          fixed(1000 / drained.cpu_ms_per_row, 0),
          drained.split,
        ]),
      ],
    ),
  );
  console.log(
    `polls: ${fixed(poll.rps, 0)}/s through both api replicas (p50 ${fixed(poll.p50_ms, 1)} ms, p99 ${fixed(poll.p99_ms, 1)} ms, ${poll.errors} errors); SSE: ${sse.opened} open, ${sse.failed} failed; ${drains.map((drained) => `drain by ${drained.replicas}: ${drained.stored}/${drained.rows} rows in ${fixed(drained.drain_s, 1)} s (${fixed(drained.rows_per_s, 0)} rows/s)`).join('; ')}.`,
  );
  const path = writeResult('scaling', machine, { poll, sse, drains });
  console.log(`Result: ${path}`);
}
