// Edge heartbeats at fleet size: N simulated edges (default 10,000; --quick 2,000) each send one
// heartbeat per interval (1 s, the default an edge keeps) to a real router for a measured window.
// Reports the NATS messages per second the fleet costs, the router's CPU per heartbeat, the Redis
// commands per second and the Redis bytes per edge's presence. Heartbeats come from this process,
// spread evenly over each interval as independent edges' timers would be, each with a valid token.
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import { Limits, edgeToken, type EdgeHeartbeat } from '#contracts';
import { encodeJson } from '#messaging';
import { cpuSecondsOf, machineFacts, writeResult } from './lib/machine.js';
import { fixed, table } from './lib/stats.js';
import { BENCH_EDGE_SECRET, BenchTether } from './lib/tether.js';
import type { BenchOptions } from './run.js';

const WARMUP_MS = 3_000;
/** Edge ids far from the enrolled demo edges'. */
const FIRST_EDGE_ID = 7_000_000;
/** Heartbeats are published in this many slices per interval (every 10 ms at 1 s). */
const SLICES = 100;

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function commandsProcessed(redis: Redis): Promise<number> {
  const info = await redis.info('stats');
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

export async function heartbeats(options: BenchOptions): Promise<void> {
  const edges = options.quick ? 2_000 : 10_000;
  const windowMs = options.quick ? 10_000 : 30_000;
  const intervalMs = Limits.EDGE_HEARTBEAT_INTERVAL_MS;
  const machine = machineFacts();
  const tether = new BenchTether({ label: 'benchbeat', edge: false });
  const redis = new Redis(process.env.TETHER_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', {
    lazyConnect: true,
  });
  let running = true;
  try {
    await tether.up();
    await redis.connect();
    const nc = await connect({ servers: tether.stack.options.natsUrl.split(','), name: 'bench-heartbeats' });
    const subject = tether.stack.subjects.edgeHeartbeat;
    const fleet: EdgeHeartbeat[] = Array.from({ length: edges }, (_, index) => {
      const edgeId = String(FIRST_EDGE_ID + index);
      return {
        edge_id: edgeId,
        edge_token: edgeToken(BENCH_EDGE_SECRET, edgeId),
        device: `bench-${index}`,
        agent_kinds: ['scripted'],
        installations: [{ id: 'i'.repeat(32), kind: 'scripted' }],
        live_sessions: 0,
        max_sessions: Limits.EDGE_LIVE_SESSIONS_MAX,
        sent_at: 0,
        interval_ms: intervalMs,
      };
    });
    let published = 0;
    const sender = (async () => {
      const perSlice = Math.ceil(edges / SLICES);
      for (let slice = 0; running; slice = (slice + 1) % SLICES) {
        const started = performance.now();
        for (const heartbeat of fleet.slice(slice * perSlice, (slice + 1) * perSlice)) {
          nc.publish(subject, encodeJson({ ...heartbeat, sent_at: Date.now() }));
          published += 1;
        }
        await wait(Math.max(0, intervalMs / SLICES - (performance.now() - started)));
      }
    })();
    await wait(WARMUP_MS);
    const router = tether.stack.pid('router');
    const cpu0 = cpuSecondsOf(router) ?? Number.NaN;
    const commands0 = await commandsProcessed(redis);
    const published0 = published;
    const started = performance.now();
    await wait(windowMs);
    const elapsedS = (performance.now() - started) / 1000;
    const cpu1 = cpuSecondsOf(router) ?? Number.NaN;
    const commands1 = await commandsProcessed(redis);
    const sent = published - published0;
    running = false;
    await sender;
    await nc.drain();
    const sample = `${tether.stack.subjects.namespace}:edge:${FIRST_EDGE_ID}:presence`;
    const presenceBytes =
      ((await redis.call('MEMORY', 'USAGE', sample, 'SAMPLES', '0')) as number | null) ?? 0;
    const online = await tether.call<{ id: string; online?: boolean }[]>(
      'GET',
      '/api/v1/edge-agents/connectors',
    );

    const figures = {
      edges,
      interval_ms: intervalMs,
      window_s: elapsedS,
      nats_messages_per_s: sent / elapsedS,
      router_cpu_s_per_s: (cpu1 - cpu0) / elapsedS,
      router_cpu_us_per_heartbeat: ((cpu1 - cpu0) * 1e6) / sent,
      redis_commands_per_s: (commands1 - commands0) / elapsedS,
      presence_bytes_per_edge: presenceBytes,
      demo_connectors_listed: online.data.length,
    };
    console.log(
      table(
        ['edges', 'interval', 'NATS msg/s', 'router CPU', 'µs/heartbeat', 'Redis cmd/s', 'presence B/edge'],
        [
          [
            edges,
            `${intervalMs} ms`,
            fixed(figures.nats_messages_per_s, 0),
            `${fixed(figures.router_cpu_s_per_s * 100, 1)} %`,
            fixed(figures.router_cpu_us_per_heartbeat, 1),
            fixed(figures.redis_commands_per_s, 0),
            presenceBytes,
          ],
        ],
      ),
    );
    console.log(`result: ${writeResult('heartbeats', machine, figures)}`);
  } finally {
    running = false;
    redis.disconnect();
    await tether.down();
  }
}
