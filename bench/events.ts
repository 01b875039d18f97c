// B2 event latency: sessions receive deltas at a fixed rate; for every session one long-polling
// `watch` client and one SSE subscriber (`GET /api/v1/sessions/{id}/events`) measure the time from
// the edge's emit to the watch return and to the SSE `batch` that carries the delta. The sessions
// are saved-access sessions (a real access in history, every update carries its `access_id`), so
// history stores their journal: the SSE path is edge → router → JetStream → history (commit) →
// notice carrying the next page → api → SSE (or, for a stream not at the page's start, an `after`
// page read from history after the notice). The deltas come from a raw NATS client
// posing as the enrolled edge (the router's session-update path, the same messages the edge
// connector sends), because the real edge connector keeps at most EDGE_LIVE_SESSIONS_MAX (4) live
// sessions per process and hundreds of edge processes do not fit on this machine. Watchers and SSE
// subscribers run in load-generator processes of their own; a passive NATS tap (another process)
// splits the SSE path into its hops.
import { fork } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { inParallel, opaqueId, type FakeEdge } from './lib/fake-edge.js';
import { waitForStoredSessions } from './lib/history-wait.js';
import { JournalTap, type TapResult } from './lib/journal-tap.js';
import { PgActivity } from './lib/pg-activity.js';
import { cpuSecondsOf, machineFacts, writeResult } from './lib/machine.js';
import { schedOf } from './lib/sched.js';
import { allOpened, startSseClients, type BatchRecord, type SseClients, type SseResult } from './lib/sse.js';
import { fixed, summarize, table, type LatencySummary } from './lib/stats.js';
import { BenchTether, connectFakeEdge } from './lib/tether.js';
import { summarizeProfile, type ProfileSummary } from './profile.js';
import type { BenchOptions } from './run.js';

/** Seconds between two deltas of one session. */
const DELTA_INTERVAL_MS = 1_000;
const TICK_MS = 20;

interface WatchSpec {
  url: string;
  token: string;
  edgeId: string;
  accessId: string;
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
          access_id: spec.accessId,
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

/** The SSE path's hops, in ms, from the tap's times around each timed `batch`. */
interface Hops {
  /** edge emit → the router's journal append passed NATS (update request, Redis head, append). */
  router: number[];
  /** append → history's commit notice (consumer queue, transaction, notice). */
  history_commit: number[];
  /** notice → the api's `after` page request (negative: a read already in flight saw the row). */
  api_wake: number[];
  /** the api's page request → history's reply (history's page read). */
  history_page_read: number[];
  /** page reply → the event's bytes at the client (api: event, write; client: parse; ± the tap's own delay). */
  api_to_client: number[];
  /** notice → the event at the client, for a batch no read produced (the notice's own page). */
  notice_to_client: number[];
}

function splitHops(records: BatchRecord[], tap: TapResult): { hops: Hops; unmatched: number } {
  const hops: Hops = {
    router: [],
    history_commit: [],
    api_wake: [],
    history_page_read: [],
    api_to_client: [],
    notice_to_client: [],
  };
  const pages = new Map<string, TapResult['pages']>();
  for (const page of tap.pages) {
    const list = pages.get(page.session) ?? [];
    list.push(page);
    pages.set(page.session, list);
  }
  for (const list of pages.values()) list.sort((a, b) => a.start - b.start);
  let unmatched = 0;
  for (const record of records) {
    const append = tap.appends[`${record.session}:${record.emitted}`];
    if (!append) {
      unmatched++;
      continue;
    }
    hops.router.push(append.at - record.emitted);
    const notice = tap.notices[`${record.session}:${append.sequence}`];
    if (notice !== undefined) hops.history_commit.push(notice - append.at);
    // The read that produced the event: the session's last page read from below the row that
    // started before the event arrived (its reply may reach the tap a hair after the client's
    // event) and answered after the row was committed. None: the notice's own page was applied.
    const committedAt = notice ?? append.at;
    const page = pages
      .get(record.session)
      ?.findLast(
        (candidate) =>
          candidate.start <= record.received &&
          candidate.after < append.sequence &&
          candidate.end >= committedAt,
      );
    if (!page) {
      if (notice !== undefined) hops.notice_to_client.push(record.received - notice);
      continue;
    }
    if (notice !== undefined) hops.api_wake.push(page.start - notice);
    hops.history_page_read.push(page.end - page.start);
    hops.api_to_client.push(record.received - page.end);
  }
  return { hops, unmatched };
}

/**
 * Every delta the streams delivered, timed on its own: a batch delivers every row of its session
 * after the previous batch's, up to its own (the tap knows each row's emit time), so a delta that
 * history or the api folded into a later batch counts from its own emit, not the newest one's.
 */
function perDelta(records: BatchRecord[], tap: TapResult, from: number): number[] {
  const rows = new Map<string, { sequence: number; emitted: number }[]>();
  for (const [key, append] of Object.entries(tap.appends)) {
    const cut = key.lastIndexOf(':');
    const emitted = Number(key.slice(cut + 1));
    if (emitted < from) continue;
    const session = key.slice(0, cut);
    const list = rows.get(session) ?? [];
    list.push({ sequence: append.sequence, emitted });
    rows.set(session, list);
  }
  for (const list of rows.values()) list.sort((a, b) => a.sequence - b.sequence);
  const batches = new Map<string, BatchRecord[]>();
  for (const record of records) {
    const list = batches.get(record.session) ?? [];
    list.push(record);
    batches.set(record.session, list);
  }
  const latencies: number[] = [];
  for (const [session, list] of batches) {
    let delivered = 0;
    for (const record of list.sort((a, b) => a.received - b.received)) {
      const upTo = tap.appends[`${session}:${record.emitted}`]?.sequence;
      if (upTo === undefined || upTo <= delivered) continue;
      for (const row of rows.get(session) ?? []) {
        if (row.sequence > delivered && row.sequence <= upTo) latencies.push(record.received - row.emitted);
      }
      delivered = upTo;
    }
  }
  return latencies;
}

/**
 * Journal rows history committed in [from, to]: the heads its notices moved, per session, from
 * the row before the first one the tap saw appended (the tap starts after the sessions exist).
 */
function rowsCommitted(tap: TapResult, from: number, to: number): number {
  const firstAppended = new Map<string, number>();
  for (const [key, append] of Object.entries(tap.appends)) {
    const session = key.slice(0, key.lastIndexOf(':'));
    firstAppended.set(session, Math.min(firstAppended.get(session) ?? Infinity, append.sequence));
  }
  const bySession = new Map<string, { head: number; at: number }[]>();
  for (const [key, at] of Object.entries(tap.notices)) {
    const cut = key.lastIndexOf(':');
    const list = bySession.get(key.slice(0, cut)) ?? [];
    list.push({ head: Number(key.slice(cut + 1)), at });
    bySession.set(key.slice(0, cut), list);
  }
  let rows = 0;
  for (const [session, list] of bySession) {
    let head = (firstAppended.get(session) ?? 1) - 1;
    for (const notice of list.sort((a, b) => a.at - b.at)) {
      if (notice.at >= from && notice.at <= to && notice.head > head) rows += notice.head - head;
      head = Math.max(head, notice.head);
    }
  }
  return rows;
}

/** SSE streams per load-generator process, and how many each process opens at once. */
const SSE_SPREAD = { perProcess: 250, openParallel: 8, openTimeoutMs: 60_000 };
/** How long history may take to store the sessions before the streams open (quick, full). */
const HISTORY_WAIT_MS = { quick: 120_000, full: 300_000 };

export async function events(options: BenchOptions): Promise<void> {
  const sessionsCount = options.sessions ?? (options.quick ? 200 : 1_000);
  const durationMs = options.quick ? 15_000 : 40_000;
  const drainMs = options.quick ? 15_000 : 30_000;
  const warmupMs = 3_000;
  const machine = machineFacts();
  const tether = new BenchTether({
    label: 'benchevents',
    edge: false,
    ...(options.profileDir ? { profileDir: options.profileDir } : {}),
  });
  const servicePids: Record<string, number | undefined> = {};
  let loadStartMs: number | undefined;
  let written: { path: string; body: Record<string, unknown> } | undefined;
  let edge: FakeEdge | undefined;
  let sse: SseClients[] = [];
  let tap: JournalTap | undefined;
  try {
    await tether.up();
    const subjects = tether.stack.subjects;
    const connected = await connectFakeEdge(tether);
    edge = connected.edge;
    const accessId = connected.accessId;
    const ids = Array.from({ length: sessionsCount }, (_, index) => opaqueId(0xe7e, index));
    let started = performance.now();
    await inParallel(sessionsCount, 32, (index) => edge!.update(ids[index]!, tether.owner, { accessId }));
    const createdSeconds = (performance.now() - started) / 1000;
    // Open the streams once history stored every session (an open before that is a 404).
    const storedSeconds = await waitForStoredSessions(
      tether.databaseUrl,
      sessionsCount,
      options.quick ? HISTORY_WAIT_MS.quick : HISTORY_WAIT_MS.full,
    );
    console.log(
      `B2 events: ${sessionsCount} saved sessions created in ${fixed(createdSeconds, 1)} s, stored by history ${fixed(storedSeconds, 1)} s later; opening one SSE stream each…`,
    );
    started = performance.now();
    sse = startSseClients(tether, accessId, ids, { ...SSE_SPREAD, measure: true });
    const { opened: streamsOpen, failed: streamsFailed, retried404 } = await allOpened(sse);
    console.log(
      `  ${streamsOpen} SSE streams open (${streamsFailed} failed, ${retried404} retries after 404) in ${fixed((performance.now() - started) / 1000, 1)} s.`,
    );

    tap = await JournalTap.start({ natsUrl: tether.stack.options.natsUrl, namespace: subjects.namespace });
    const jsm = await jetstreamManager(edge.connection);
    const backlog: { t_s: number; num_pending: number; num_ack_pending: number }[] = [];
    console.log(
      `  ${sessionsCount} sessions, one delta per session every ${DELTA_INTERVAL_MS} ms (${fixed((sessionsCount * 1000) / DELTA_INTERVAL_MS, 0)} updates/s), one watcher and one SSE stream each, ${durationMs / 1000} s.`,
    );
    const watchers = runWatchers({
      url: `${tether.stack.apiUrl}/api/v1/edge-agents`,
      token: tether.token,
      edgeId: tether.edge.id,
      accessId,
      sessions: ids,
      durationMs: durationMs + warmupMs,
    });
    // Let every watcher open before the first delta, then spread the sessions over the interval.
    await new Promise((resolve) => setTimeout(resolve, warmupMs));
    const activity = await PgActivity.start(tether.databaseUrl);
    const timesBefore = serviceTimes(tether);
    const start = Date.now();
    loadStartMs = performance.now() - tether.spawnedAt;
    for (const name of SERVICES) servicePids[name] = tether.stack.pid(name);
    const next = ids.map((_, index) => start + (index * DELTA_INTERVAL_MS) / sessionsCount);
    const busy = new Set<number>();
    /** Session → emit time of its last acked delta (what every SSE stream must show in the end). */
    const lastAcked: Record<string, number> = {};
    let emitted = 0;
    let skipped = 0;
    let failed = 0;
    let nextSample = start;
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
        const sent = edge!.update(id, tether.owner, { accessId, running: true });
        // update() stamps the snapshot before its first await: the emit time is readable now.
        const emitAt = Number(
          /@(\d+)$/.exec(edge!.sessions.get(id)?.snapshot.messages?.at(-1)?.text ?? '')?.[1],
        );
        void sent
          .then(() => (lastAcked[id] = emitAt))
          .catch(() => failed++)
          .finally(() => busy.delete(index));
      });
      if (now >= nextSample) {
        nextSample += 1_000;
        void jsm.consumers
          .info(subjects.sessionsStream, subjects.historyJournalConsumer)
          .then((info) =>
            backlog.push({
              t_s: (Date.now() - start) / 1000,
              num_pending: info.num_pending,
              num_ack_pending: info.num_ack_pending,
            }),
          )
          .catch(() => undefined);
      }
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
    const emitSeconds = (Date.now() - start) / 1000;
    const cpuRun = serviceUse(timesBefore, serviceTimes(tether), emitSeconds);
    const postgres = await activity.stop();
    while (busy.size > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    console.log(
      `  deltas sent; waiting up to ${drainMs / 1000} s for every SSE stream to show its last one…`,
    );
    const [watched, ...streamed] = await Promise.all([
      watchers,
      ...sse.map((clients) => clients.stop(lastAcked, drainMs)),
    ]);
    sse = [];
    const tapped = await tap.stop();
    tap = undefined;

    const records = streamed.flatMap((part: SseResult) => part.batches);
    const deltaLatencies = perDelta(records, tapped, start);
    const sseLatency = summarize(deltaLatencies);
    const batchLatency = summarize(records.map((record) => record.received - record.emitted));
    const watchLatency: LatencySummary = summarize(watched!.latencies);
    const { hops, unmatched } = splitHops(records, tapped);
    const hopSummaries = Object.fromEntries(
      Object.entries(hops).map(([name, values]) => [name, summarize(values)]),
    ) as Record<keyof Hops, LatencySummary>;
    // History's commit rate while the deltas ran (a notice names the head after one or more rows).
    const commitsInRun = rowsCommitted(tapped, start, start + emitSeconds * 1000);
    const folded = records.reduce((sum, record) => sum + record.folded, 0);
    const undelivered = streamed.reduce((sum, part) => sum + part.undelivered, 0);
    const closedEarly = streamed.reduce((sum, part) => sum + part.closedEarly, 0);
    const sseEvents: Record<string, number> = {};
    for (const part of streamed)
      for (const [type, count] of Object.entries(part.events))
        sseEvents[type] = (sseEvents[type] ?? 0) + count;
    const result = {
      sessions: sessionsCount,
      history_store_wait_s: storedSeconds,
      delta_interval_ms: DELTA_INTERVAL_MS,
      duration_s: durationMs / 1000,
      emitted,
      skipped,
      failed,
      updates_per_s: emitted / emitSeconds,
      watch: {
        replies: watched!.replies,
        errors: watched!.errors,
        latency_ms: watchLatency,
        note: 'edge emit (Date.now in the sender, carried in the snapshot) → watch reply received; the router answers the first change after a quiet spell at once and a burst at most once per WATCH_COALESCE_MS (60 ms); watch requests carry access_id.',
      },
      sse: {
        streams_open: streamsOpen,
        streams_failed: streamsFailed,
        open_retries_after_404: retried404,
        closed_early: closedEarly,
        closed_early_after_open_ms: summarize(streamed.flatMap((part) => part.closedEarlyAfterMs)),
        events: sseEvents,
        timed_batches: records.length,
        deltas_delivered: deltaLatencies.length,
        deltas_acked: emitted - failed,
        deltas_folded: folded,
        sessions_undelivered_after_drain: undelivered,
        drain_ms: drainMs,
        latency_ms: sseLatency,
        latency_per_batch_newest_delta_ms: batchLatency,
        hops_ms: hopSummaries,
        hops_unmatched: unmatched,
        note: 'edge emit → the SSE `batch` event carrying that delta received by the client, for every delivered delta (a batch delivers every row of its session since the previous batch; each row timed from its own emit); latency_per_batch_newest_delta_ms times each batch against the newest delta it carries (the assistant item body); hops per batch from a passive NATS tap.',
      },
      service_cpu_percent: cpuRun,
      history_rows_committed_per_s: commitsInRun / emitSeconds,
      postgres_activity: postgres,
      history_backlog: backlog,
      target: { p99_ms: 50 },
      target_met: { watch: watchLatency.p99 <= 50, sse: sseLatency.p99 <= 50 },
    };
    const path = writeResult('events', machine, result);
    written = { path, body: { benchmark: 'events', machine, ...result } };
    console.log(
      '\n' +
        table(
          ['path', 'sessions', 'updates/s', 'timed', 'errors', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
          [
            [
              'watch',
              sessionsCount,
              fixed(result.updates_per_s, 0),
              watched!.replies,
              watched!.errors,
              fixed(watchLatency.p50, 0),
              fixed(watchLatency.p90, 0),
              fixed(watchLatency.p99, 0),
              fixed(watchLatency.max, 0),
            ],
            [
              'SSE (every delta)',
              sessionsCount,
              fixed(result.updates_per_s, 0),
              deltaLatencies.length,
              streamsFailed + closedEarly,
              fixed(sseLatency.p50, 0),
              fixed(sseLatency.p90, 0),
              fixed(sseLatency.p99, 0),
              fixed(sseLatency.max, 0),
            ],
            [
              'SSE (per batch, newest delta)',
              sessionsCount,
              fixed(result.updates_per_s, 0),
              records.length,
              streamsFailed + closedEarly,
              fixed(batchLatency.p50, 0),
              fixed(batchLatency.p90, 0),
              fixed(batchLatency.p99, 0),
              fixed(batchLatency.max, 0),
            ],
          ],
        ) +
        '\n\nSSE path, per timed batch (passive NATS tap):\n' +
        table(
          ['hop', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
          Object.entries(hopSummaries).map(([name, summary]) => [
            name,
            summary.count,
            fixed(summary.p50, 1),
            fixed(summary.p90, 1),
            fixed(summary.p99, 1),
            fixed(summary.max, 1),
          ]),
        ),
    );
    const maxBacklog = Math.max(0, ...backlog.map((sample) => sample.num_pending + sample.num_ack_pending));
    console.log(
      `\n${skipped} deltas skipped (previous one not yet acked), ${failed} failed. SSE: ${deltaLatencies.length} of ${emitted - failed} acked deltas delivered, ${folded} of them folded into a later batch, ${undelivered} sessions without their last delta after the drain, ${closedEarly} streams closed early. History backlog max ${maxBacklog} messages. During the deltas, % of one core (CPU all threads / main thread running / main thread runnable but waiting for a CPU): ${Object.entries(
        cpuRun,
      )
        .map(
          ([name, value]) =>
            `${name} ${fixed(value.cpu_percent, 0)} / ${fixed(value.main_thread_running_percent, 0)} / ${fixed(value.main_thread_runnable_waiting_percent, 0)}`,
        )
        .join(', ')}.`,
    );
    console.log(
      `History committed ${fixed(commitsInRun / emitSeconds, 0)} rows/s while the deltas ran. Its Postgres sessions, sampled every ${postgres.interval_ms} ms (share of non-idle backend samples):\n` +
        table(
          ['state; wait event; statement', 'share %'],
          postgres.states.slice(0, 10).map((state) => [state.key, fixed(state.share * 100, 1)]),
        ),
    );
    console.log(
      `Target p99 ≤ 50 ms: watch ${result.target_met.watch ? 'met' : 'missed'}, SSE ${result.target_met.sse ? 'met' : 'missed'}. Result: ${path}`,
    );
  } catch (error) {
    console.error(tether.stack?.output().split('\n').slice(-40).join('\n'));
    throw error;
  } finally {
    for (const clients of sse) clients.kill();
    tap?.kill();
    await edge?.close();
    await tether.down();
  }
  if (options.profileDir && written && loadStartMs !== undefined) {
    // Written when the services exit; the samples before the deltas started (boot, set-up) are dropped.
    const profiles = serviceProfiles(options.profileDir, servicePids, loadStartMs);
    for (const profile of profiles) {
      console.log(
        `\nTop self time from the first delta on, ${profile.service} (${profile.file}):\n${profile.table}`,
      );
    }
    writeFileSync(written.path, JSON.stringify({ ...written.body, profiles }, null, 2) + '\n');
  }
}

function serviceProfiles(
  dir: string,
  pids: Record<string, number | undefined>,
  skipFirstMs: number,
): ProfileSummary[] {
  const services = new Map(Object.entries(pids).map(([name, pid]) => [String(pid), name]));
  return readdirSync(dir)
    .filter((file) => file.endsWith('.cpuprofile'))
    .flatMap((file) => {
      const service = services.get(file.split('.')[3] ?? '');
      if (!service) return [];
      const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Parameters<
        typeof summarizeProfile
      >[2];
      return [summarizeProfile(service, join(dir, file), profile, skipFirstMs)];
    });
}

const SERVICES = ['api', 'router', 'history'] as const;
type ServiceName = (typeof SERVICES)[number];
type ServiceTimes = Record<ServiceName, { cpu: number; running: number; waiting: number }>;
/** Per service, as % of one core over the interval. */
type ServiceUse = Record<
  ServiceName,
  { cpu_percent: number; main_thread_running_percent: number; main_thread_runnable_waiting_percent: number }
>;

/** CPU seconds (all threads) and the main thread's run / run-queue wait seconds so far. */
function serviceTimes(tether: BenchTether): ServiceTimes {
  const now = {} as ServiceTimes;
  for (const name of SERVICES) {
    const pid = tether.stack.pid(name);
    const sched = schedOf(pid);
    now[name] = {
      cpu: cpuSecondsOf(pid) ?? Number.NaN,
      running: sched?.running ?? Number.NaN,
      waiting: sched?.waiting ?? Number.NaN,
    };
  }
  return now;
}

function serviceUse(before: ServiceTimes, after: ServiceTimes, seconds: number): ServiceUse {
  const use = {} as ServiceUse;
  const percent = (value: number) => (value / seconds) * 100;
  for (const name of SERVICES) {
    use[name] = {
      cpu_percent: percent(after[name].cpu - before[name].cpu),
      main_thread_running_percent: percent(after[name].running - before[name].running),
      main_thread_runnable_waiting_percent: percent(after[name].waiting - before[name].waiting),
    };
  }
  return use;
}

if (process.argv[2] === '--watchers' && process.send) {
  process.once('message', (spec: WatchSpec) => {
    void watchAll(spec).then((result) => process.send?.(result, () => process.exit(0)));
  });
}
