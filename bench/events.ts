// B2 event latency (watch only; SSE does not exist yet): sessions receive deltas at a fixed rate
// and one long-polling `watch` client per session measures the time from the edge's emit to the
// watch return over HTTP. The deltas come from a raw NATS client posing as the enrolled edge
// (the router's session-update path, the same messages the edge connector sends), because the
// real edge connector keeps at most EDGE_LIVE_SESSIONS_MAX (4) live sessions per process and
// hundreds of edge processes do not fit on this machine. The watchers run in their own process.
import { fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { FakeEdge, inParallel, opaqueId } from './lib/fake-edge.js';
import { machineFacts, writeResult } from './lib/machine.js';
import { fixed, summarize, table, type LatencySummary } from './lib/stats.js';
import { BENCH_EDGE_SECRET, BenchTether } from './lib/tether.js';
import type { BenchOptions } from './run.js';

/** Seconds between two deltas of one session. */
const DELTA_INTERVAL_MS = 1_000;
const TICK_MS = 20;

interface WatchSpec {
  url: string;
  token: string;
  edgeId: string;
  sessions: string[];
  durationMs: number;
}
interface WatchResult {
  latencies: number[];
  replies: number;
  errors: number;
}

function post(agent: Agent, url: URL, token: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Buffer.concat(chunks).toString())
            : reject(new Error(`HTTP ${res.statusCode}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function watchAll(spec: WatchSpec): Promise<WatchResult> {
  const url = new URL(spec.url);
  const agent = new Agent({ keepAlive: true, maxSockets: spec.sessions.length });
  const stopAt = Date.now() + spec.durationMs;
  const result: WatchResult = { latencies: [], replies: 0, errors: 0 };
  await Promise.all(
    spec.sessions.map(async (sessionId) => {
      let cursor = 1;
      while (Date.now() < stopAt) {
        const body = JSON.stringify({
          edge_id: spec.edgeId,
          action: 'watch',
          session_id: sessionId,
          cursor: String(cursor),
        });
        try {
          const reply = JSON.parse(await post(agent, url, spec.token, body)) as {
            data?: { revision?: number; messages?: { text?: string }[] };
          };
          const received = Date.now();
          const revision = reply.data?.revision ?? cursor;
          const emitted = Number(/@(\d+)$/.exec(reply.data?.messages?.at(-1)?.text ?? '')?.[1]);
          if (revision > cursor && Number.isFinite(emitted)) {
            result.latencies.push(received - emitted);
            result.replies++;
          }
          cursor = Math.max(cursor, revision);
        } catch {
          result.errors++;
          await new Promise((resume) => setTimeout(resume, 100));
        }
      }
    }),
  );
  agent.destroy();
  return result;
}

function runWatchers(spec: WatchSpec): Promise<WatchResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--watchers'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: WatchResult | undefined;
    child.once('message', (message) => (result = message as WatchResult));
    child.once('exit', (code) =>
      result ? resolve(result) : reject(new Error(`watchers exited with ${code}`)),
    );
    child.send(spec);
  });
}

export async function events(options: BenchOptions): Promise<void> {
  const sessionsCount = options.quick ? 200 : 1_000;
  const durationMs = options.quick ? 15_000 : 40_000;
  const warmupMs = 3_000;
  const machine = machineFacts();
  const tether = new BenchTether({ label: 'benchevents', edge: false });
  let edge: FakeEdge | undefined;
  try {
    await tether.up();
    edge = await FakeEdge.connect(
      tether.stack.options.natsUrl,
      tether.stack.subjects,
      tether.edge.id,
      BENCH_EDGE_SECRET,
    );
    const ids = Array.from({ length: sessionsCount }, (_, index) => opaqueId(0xe7e, index));
    await inParallel(sessionsCount, 32, (index) => edge!.update(ids[index]!, tether.owner));
    console.log(
      `B2 events: ${sessionsCount} sessions, one delta per session every ${DELTA_INTERVAL_MS} ms (${fixed((sessionsCount * 1000) / DELTA_INTERVAL_MS, 0)} updates/s), one watcher each, ${durationMs / 1000} s.`,
    );
    const watchers = runWatchers({
      url: `${tether.stack.apiUrl}/api/v1/edge-agents`,
      token: tether.token,
      edgeId: tether.edge.id,
      sessions: ids,
      durationMs: durationMs + warmupMs,
    });
    // Let every watcher open before the first delta, then spread the sessions over the interval.
    await new Promise((resolve) => setTimeout(resolve, warmupMs));
    const start = Date.now();
    const next = ids.map((_, index) => start + (index * DELTA_INTERVAL_MS) / sessionsCount);
    const busy = new Set<number>();
    let emitted = 0;
    let skipped = 0;
    while (Date.now() < start + durationMs) {
      const now = Date.now();
      ids.forEach((id, index) => {
        if (next[index]! > now) return;
        next[index]! += DELTA_INTERVAL_MS;
        // One update in flight per session keeps its revisions in order; a late one is skipped.
        if (busy.has(index)) {
          skipped++;
          return;
        }
        busy.add(index);
        emitted++;
        void edge!
          .update(id, tether.owner, { running: true })
          .catch(() => undefined)
          .finally(() => busy.delete(index));
      });
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
    const watched = await watchers;
    const latency: LatencySummary = summarize(watched.latencies);
    const result = {
      sessions: sessionsCount,
      delta_interval_ms: DELTA_INTERVAL_MS,
      duration_s: durationMs / 1000,
      emitted,
      skipped,
      watch_replies: watched.replies,
      watch_errors: watched.errors,
      latency_ms: latency,
      note: 'edge emit (session update emitted_at, Date.now in the sender) → watch reply received by the client; includes the router’s WATCH_COALESCE_MS (60 ms) wait by design.',
      target: { p99_ms: 50 },
      target_met: latency.p99 <= 50,
    };
    const path = writeResult('events', machine, result);
    console.log(
      '\n' +
        table(
          ['sessions', 'updates/s', 'watch replies', 'errors', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
          [
            [
              sessionsCount,
              fixed(emitted / (durationMs / 1000), 0),
              watched.replies,
              watched.errors,
              fixed(latency.p50, 0),
              fixed(latency.p90, 0),
              fixed(latency.p99, 0),
              fixed(latency.max, 0),
            ],
          ],
        ),
    );
    console.log(
      `\n${skipped} deltas skipped (previous one not yet acked). Target p99 ≤ 50 ms: ${result.target_met ? 'met' : 'missed'}. Result: ${path}`,
    );
  } finally {
    await edge?.close();
    await tether.down();
  }
}

if (process.argv[2] === '--watchers' && process.send) {
  process.once('message', (spec: WatchSpec) => {
    void watchAll(spec).then((result) => process.send?.(result, () => process.exit(0)));
  });
}
