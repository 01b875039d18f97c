// B3 footprint: Redis bytes per idle session and per lease, and router/api memory (RSS) with
// many idle sessions, many open SSE streams and many open `watch` requests. Sessions come from a
// raw NATS client posing as the enrolled edge (the router's session-update path) under a real
// saved access, so history stores them and their journal can be streamed; leases from one `poll`
// per session sent to the router directly (the api's own request); SSE streams are real
// `GET /api/v1/sessions/{id}/events` connections held by load-generator processes; watchers are
// real HTTP `watch` requests held open by the api and the router for the watch wait.
import { Redis } from 'ioredis';
import { requestService } from '#messaging';
import { LEASE_INDEX_SHARDS, RedisKeys } from '../apps/session-router/src/common/redis-keys.js';
import { inParallel, opaqueId, type FakeEdge } from './lib/fake-edge.js';
import { waitForStoredSessions } from './lib/history-wait.js';
import { runLoad } from './lib/loadgen.js';
import { machineFacts, rssOf, writeResult } from './lib/machine.js';
import { establishedTo } from './lib/sockets.js';
import { allOpened, startSseClients, type SseClients, type SseResult } from './lib/sse.js';
import { fixed, summarize, table } from './lib/stats.js';
import { BenchTether, connectFakeEdge } from './lib/tether.js';
import type { BenchOptions } from './run.js';

/** Sessions whose keys are measured one by one with MEMORY USAGE. */
const SAMPLE_SESSIONS = 200;
/** Requests in flight while creating sessions and leases. */
const CREATE_PARALLEL = 32;
const MiB = 1024 * 1024;
/**
 * SSE streams per load-generator process (each holds one socket per stream), opened so many at
 * once; a stream whose session history has not stored yet (404) is retried until openTimeoutMs.
 */
const SSE_SPREAD = { perProcess: 1_250, openParallel: 16, openTimeoutMs: 120_000 };
/** How long history may take to store the streamed sessions (it ingests a few dozen rows a second here). */
const HISTORY_WAIT_MS = 900_000;

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

async function memoryUsage(redis: Redis, key: string): Promise<number> {
  // SAMPLES 0: count every element of a hash or sorted set, not an estimate.
  const bytes = (await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) as number | null;
  return bytes ?? 0;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function footprint(options: BenchOptions): Promise<void> {
  const sessionsCount = options.sessions ?? (options.quick ? 2_000 : 10_000);
  // Half the sessions get a stream and a watcher (5,000 of the full 10,000), so the curve's points compare.
  const watchersCount = Math.ceil(sessionsCount / 2);
  const streamsCount = watchersCount;
  const machine = machineFacts();
  const tether = new BenchTether({ label: 'benchfoot', edge: false });
  let edge: FakeEdge | undefined;
  let sse: SseClients[] = [];
  const redis = new Redis(process.env.TETHER_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', {
    lazyConnect: true,
  });
  try {
    await tether.up();
    await redis.connect();
    const ns = tether.stack.subjects.namespace;
    const pids = {
      api: tether.stack.pid('api'),
      router: tether.stack.pid('router'),
      history: tether.stack.pid('history'),
    };
    const rss = () => ({ api: rssOf(pids.api), router: rssOf(pids.router), history: rssOf(pids.history) });
    const connected = await connectFakeEdge(tether);
    edge = connected.edge;
    const accessId = connected.accessId;
    const ids = Array.from({ length: sessionsCount }, (_, index) => opaqueId(0xbe4c, index));

    const rssIdle = rss();
    const memoryStart = await usedMemory(redis);
    console.log(
      `B3 footprint: creating ${sessionsCount} idle sessions through the router's session-update path…`,
    );
    let started = performance.now();
    await inParallel(sessionsCount, CREATE_PARALLEL, (index) =>
      edge!.update(ids[index]!, tether.owner, { accessId }),
    );
    const sessionsSeconds = (performance.now() - started) / 1000;
    const memorySessions = await usedMemory(redis);

    const sample = ids.slice(0, SAMPLE_SESSIONS);
    let sessionKeyBytes = 0;
    for (const id of sample) {
      for (const suffix of ['rev', 'epoch', 'meta'])
        sessionKeyBytes += await memoryUsage(redis, `${ns}:{${id}}:${suffix}`);
    }

    console.log(`  …and one lease per session (a poll through the router).`);
    started = performance.now();
    await inParallel(sessionsCount, CREATE_PARALLEL, (index) =>
      requestService(
        edge!.connection,
        tether.stack.subjects,
        'routerEdgeAgent',
        {
          actor_id: tether.owner,
          request: { edge_id: tether.edge.id, action: 'poll', access_id: accessId, session_id: ids[index]! },
        },
        { timeoutMs: 30_000 },
      ),
    );
    const leasesSeconds = (performance.now() - started) / 1000;
    const memoryLeases = await usedMemory(redis);
    let leaseKeyBytes = 0;
    for (const id of sample) leaseKeyBytes += await memoryUsage(redis, `${ns}:{${id}}:lease`);
    // The lease index is sharded (docs/scaling.md "Redis"): every shard counts.
    const indexKeys = Array.from({ length: LEASE_INDEX_SHARDS }, (_, shard) =>
      new RedisKeys(ns).leases(shard),
    );
    let leaseIndexBytes = 0;
    let leaseIndexEntries = 0;
    for (const key of indexKeys) {
      leaseIndexBytes += await memoryUsage(redis, key);
      leaseIndexEntries += await redis.zcard(key);
    }
    await wait(1_000);
    const rssSessions = rss();

    console.log(
      `  …and ${streamsCount} SSE streams held open (${Math.ceil(streamsCount / SSE_SPREAD.perProcess)} load-generator processes; each opens once history stored its session).`,
    );
    // Open the streams once history stored their sessions (an open before that is a 404).
    const storedSeconds = await waitForStoredSessions(tether.databaseUrl, streamsCount, HISTORY_WAIT_MS);
    console.log(`  (history stored the first ${streamsCount} sessions ${fixed(storedSeconds, 1)} s later)`);
    started = performance.now();
    sse = startSseClients(tether, accessId, ids.slice(0, streamsCount), { ...SSE_SPREAD, measure: false });
    const { opened: streamsOpen, failed: streamsFailed, parts: opened } = await allOpened(sse);
    const streamsOpenSeconds = (performance.now() - started) / 1000;
    console.log(
      `  ${streamsOpen} SSE streams open (${streamsFailed} failed) in ${fixed(streamsOpenSeconds, 1)} s.`,
    );
    await wait(2_000);
    const rssStreams = rss();
    const apiPort = Number(new URL(tether.stack.apiUrl).port);
    const apiConnectionsStreams = establishedTo(apiPort);

    console.log(`  …and ${watchersCount} watch requests held open over HTTP beside them.`);
    const watchBodies = ids.slice(0, watchersCount).map((id) =>
      JSON.stringify({
        edge_id: tether.edge!.id,
        access_id: accessId,
        action: 'watch',
        session_id: id,
        cursor: '1',
      }),
    );
    // The watch wait is 15 s: open every watcher, sample memory while they wait, let them finish.
    const load = runLoad({
      url: `${tether.stack.apiUrl}/api/v1/edge-agents`,
      headers: { authorization: `Bearer ${tether.token}` },
      bodies: watchBodies,
      concurrency: watchersCount,
      warmupMs: 0,
      // Long enough for the load generator to send all W requests (a worker that starts after
      // the window never sends), shorter than the 15 s watch wait so each one sends once.
      durationMs: 10_000,
      countLate: true,
    });
    const peaks = { api: 0, router: 0, history: 0 };
    let apiConnectionsPeak = 0;
    for (let second = 0; second < 14; second++) {
      await wait(1_000);
      apiConnectionsPeak = Math.max(apiConnectionsPeak, establishedTo(apiPort));
      const now = rss();
      peaks.api = Math.max(peaks.api, now.api ?? 0);
      peaks.router = Math.max(peaks.router, now.router ?? 0);
      peaks.history = Math.max(peaks.history, now.history ?? 0);
    }
    const watched = await load;
    const streamed: SseResult[] = await Promise.all(sse.map((clients) => clients.stop()));
    sse = [];
    const streamsClosedEarly = streamed.reduce((sum, part) => sum + part.closedEarly, 0);
    const closedAfter = summarize(streamed.flatMap((part) => part.closedEarlyAfterMs));

    const perSession = sessionKeyBytes / sample.length;
    const perLease = leaseKeyBytes / sample.length + leaseIndexBytes / Math.max(1, leaseIndexEntries);
    const result = {
      sessions: sessionsCount,
      watchers: watchersCount,
      sse_streams: streamsCount,
      session_create_per_s: sessionsCount / sessionsSeconds,
      lease_create_per_s: sessionsCount / leasesSeconds,
      redis: {
        method: `MEMORY USAGE (SAMPLES 0) summed over the keys of ${sample.length} sessions: rev, epoch, meta; lease hash + its share of the leases sorted set. used_memory deltas (INFO memory) are shown too but include other users of this Redis.`,
        session_bytes_memory_usage: perSession,
        lease_bytes_memory_usage: perLease,
        lease_index_bytes: leaseIndexBytes,
        session_bytes_used_memory_delta: (memorySessions - memoryStart) / sessionsCount,
        lease_bytes_used_memory_delta: (memoryLeases - memorySessions) / sessionsCount,
      },
      rss_bytes: {
        idle: rssIdle,
        with_sessions_and_leases: rssSessions,
        with_sse_streams: rssStreams,
        peak_with_sse_streams_and_watchers: peaks,
      },
      api_connections_with_sse: apiConnectionsStreams,
      api_connections_peak_with_sse_and_watchers: apiConnectionsPeak,
      sse_streams_open: streamsOpen,
      sse_streams_failed: streamsFailed,
      sse_streams_closed_early: streamsClosedEarly,
      sse_streams_closed_early_after_open_ms: closedAfter,
      sse_open_seconds: streamsOpenSeconds,
      history_store_wait_s: storedSeconds,
      sse_open_statuses: opened.map((part) => part.statuses),
      watchers_completed: watched.requests,
      watchers_errors: watched.errors,
      target_redis_session_max_bytes: 2048,
      target_met: perSession + perLease <= 2048,
    };
    const path = writeResult('footprint', machine, result);
    console.log(
      '\n' +
        table(
          ['Redis per session', 'bytes (MEMORY USAGE)', 'bytes (used_memory Δ)'],
          [
            [
              'session (rev, epoch, meta)',
              fixed(perSession, 0),
              fixed(result.redis.session_bytes_used_memory_delta, 0),
            ],
            [
              'lease (hash + index entry)',
              fixed(perLease, 0),
              fixed(result.redis.lease_bytes_used_memory_delta, 0),
            ],
            [
              'total',
              fixed(perSession + perLease, 0),
              fixed((memoryLeases - memoryStart) / sessionsCount, 0),
            ],
          ],
        ) +
        '\n\n' +
        table(
          [
            'process',
            'RSS idle MiB',
            `RSS ${sessionsCount} sessions MiB`,
            `+ ${streamsOpen} SSE MiB`,
            `peak + ${watchersCount} watchers MiB`,
          ],
          (['api', 'router', 'history'] as const).map((name) => [
            name,
            fixed((rssIdle[name] ?? Number.NaN) / MiB, 1),
            fixed((rssSessions[name] ?? Number.NaN) / MiB, 1),
            fixed((rssStreams[name] ?? Number.NaN) / MiB, 1),
            fixed(peaks[name] / MiB, 1),
          ]),
        ),
    );
    console.log(
      `\nConnections established to the api: ${apiConnectionsStreams} with the SSE streams, peak ${apiConnectionsPeak} with the watchers too. SSE streams: ${streamsOpen} open, ${streamsFailed} failed to open, ${streamsClosedEarly} closed by the server early${streamsClosedEarly ? ` (${fixed(closedAfter.p50 / 1000, 1)}–${fixed(closedAfter.max / 1000, 1)} s after opening, median–max)` : ''}. Watchers answered: ${watched.requests}, errors: ${watched.errors}. Sessions created at ${fixed(result.session_create_per_s, 0)}/s, leases at ${fixed(result.lease_create_per_s, 0)}/s.`,
    );
    console.log(
      `Target ≤ 2 KiB Redis per idle session and lease: ${result.target_met ? 'met' : 'missed'}. Result: ${path}`,
    );
  } finally {
    for (const clients of sse) clients.kill();
    redis.disconnect();
    await edge?.close();
    await tether.down();
  }
}
