// B4 history ingest: journal rows persisted per second and the history consumer's lag under a
// steady stream of session updates, sent by a raw NATS client posing as the enrolled edge through
// the router's session-update path (acked once JetStream stored each entry). The rate is read
// from Postgres row counts; the lag from the JetStream consumer info and from the row counts.
//
// `--drain`: history's own capacity, which the producers above cannot show (history keeps up with
// everything they get acked). History is stopped, a backlog of chained journal rows is published
// straight onto the journal subjects (bench/lib/journal-backlog.ts), history is started again and
// the stored rows are timed from 10 % to 90 % of the backlog.
import { readFileSync } from 'node:fs';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { type FakeEdge, opaqueId } from './lib/fake-edge.js';
import { publishBacklog } from './lib/journal-backlog.js';
import { cpuSecondsOf, machineFacts, writeResult } from './lib/machine.js';
import { fixed, median, table } from './lib/stats.js';
import { BenchTether, connectFakeEdge } from './lib/tether.js';
import type { BenchOptions } from './run.js';

const SAMPLE_MS = 250;
/** Session updates in flight (each producer owns its sessions, so a session's revisions stay in order). */
const PRODUCERS = 32;
/** How long the consumer may take to catch up after the producers stop. */
const DRAIN_TIMEOUT_MS = 60_000;
/** History's ingest target (issue 6): rows/s, with lag under this many seconds. */
const TARGET_ROWS_PER_S = 5_000;
const TARGET_LAG_S = 1;

interface Sample {
  t_s: number;
  produced: number;
  rows: number;
  num_pending: number;
  num_ack_pending: number;
}

/** A running stack with the fake edge connected, its saved access, and a client of history's database. */
interface IngestStack {
  tether: BenchTether;
  edge: FakeEdge;
  accessId: string;
  db: pg.Client;
}

/**
 * Runs `body` on a fresh stack named `label` (no edge connector: the fake edge poses as one) and
 * takes it all down after; on a failure the services' last output is printed first.
 */
async function withIngestStack(label: string, body: (stack: IngestStack) => Promise<void>): Promise<void> {
  const tether = new BenchTether({ label, edge: false });
  let edge: FakeEdge | undefined;
  let db: pg.Client | undefined;
  try {
    await tether.up();
    const connected = await connectFakeEdge(tether);
    edge = connected.edge;
    db = new pg.Client({ connectionString: tether.databaseUrl });
    await db.connect();
    await body({ tether, edge, accessId: connected.accessId, db });
  } catch (error) {
    console.error(tether.stack?.output().split('\n').slice(-60).join('\n'));
    throw error;
  } finally {
    await db?.end();
    await edge?.close();
    await tether.down();
  }
}

export async function ingest(options: BenchOptions): Promise<void> {
  // run.ts hands every benchmark the same options; this mode switch is B4's own.
  if (options.drain) return drain(options);
  const sessionsCount = options.quick ? 96 : 512;
  const durationMs = options.quick ? 10_000 : 30_000;
  const machine = machineFacts();
  await withIngestStack('benchingest', async ({ tether, edge, accessId, db }) => {
    const subjects = tether.stack.subjects;
    const jsm = await jetstreamManager(edge.connection);
    const ids = Array.from({ length: sessionsCount }, (_, index) => opaqueId(0x16e5, index));

    let produced = 0;
    let failed = 0;
    let stop = false;
    const producer = async (worker: number) => {
      const mine = ids.filter((_, index) => index % PRODUCERS === worker);
      for (let turn = 0; !stop; turn++) {
        const id = mine[turn % mine.length]!;
        try {
          await edge.update(id, tether.owner, { accessId, text: `delta ${turn} `.repeat(20) });
          produced++;
        } catch {
          failed++;
        }
      }
    };
    const samples: Sample[] = [];
    const start = performance.now();
    const sample = async () => {
      const [count, info] = await Promise.all([
        db.query<{ n: string }>('SELECT count(*) AS n FROM journal'),
        jsm.consumers.info(subjects.sessionsStream, subjects.historyJournalConsumer),
      ]);
      samples.push({
        t_s: (performance.now() - start) / 1000,
        produced,
        rows: Number(count.rows[0]?.n ?? 0),
        num_pending: info.num_pending,
        num_ack_pending: info.num_ack_pending,
      });
    };
    console.log(
      `B4 ingest: ${PRODUCERS} producers over ${sessionsCount} sessions for ${durationMs / 1000} s, then drain.`,
    );
    const producers = Array.from({ length: PRODUCERS }, (_, worker) => producer(worker));
    while (performance.now() - start < durationMs) {
      await sample();
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
    stop = true;
    await Promise.all(producers);
    const stoppedAt = (performance.now() - start) / 1000;
    const drainDeadline = performance.now() + DRAIN_TIMEOUT_MS;
    do {
      await sample();
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    } while ((samples.at(-1)?.rows ?? 0) < produced && performance.now() < drainDeadline);
    const last = samples.at(-1)!;
    if (last.rows === 0) console.error(tether.stack.output().split('\n').slice(-40).join('\n'));
    const drainedAt = last.t_s;

    // Lag: how long after a moment t did Postgres hold every update acked by t.
    const lags = samples
      .filter((s) => s.t_s <= stoppedAt)
      .map((s) => {
        const caught = samples.find((later) => later.t_s >= s.t_s && later.rows >= s.produced);
        // Never caught up within the run: the lag is at least until the last sample.
        return (caught ?? samples.at(-1)!).t_s - s.t_s;
      });
    const steady = samples.filter((s) => s.t_s >= 1 && s.t_s <= stoppedAt);
    const first = steady[0];
    const lastSteady = steady.at(-1);
    const persistRate =
      first && lastSteady ? (lastSteady.rows - first.rows) / (lastSteady.t_s - first.t_s) : Number.NaN;
    const produceRate =
      first && lastSteady
        ? (lastSteady.produced - first.produced) / (lastSteady.t_s - first.t_s)
        : Number.NaN;
    const result = {
      sessions: sessionsCount,
      producers: PRODUCERS,
      duration_s: durationMs / 1000,
      updates_acked: produced,
      updates_failed: failed,
      rows_persisted: last.rows,
      acked_per_s: produceRate,
      rows_per_s_steady: persistRate,
      rows_per_s_including_drain: last.rows / drainedAt,
      drained: last.rows >= produced,
      drain_after_stop_s: drainedAt - stoppedAt,
      lag_s: { p50: median(lags), max: Math.max(...lags) },
      max_num_pending: Math.max(...samples.map((s) => s.num_pending)),
      max_num_ack_pending: Math.max(...samples.map((s) => s.num_ack_pending)),
      target: { rows_per_s: TARGET_ROWS_PER_S, lag_s: TARGET_LAG_S },
      target_met: persistRate >= TARGET_ROWS_PER_S && Math.max(...lags) < TARGET_LAG_S,
      samples,
    };
    const path = writeResult('ingest', machine, result);
    console.log(
      '\n' +
        table(
          [
            'acked/s',
            'rows/s steady',
            'rows/s incl. drain',
            'lag p50 s',
            'lag max s',
            'max num_pending',
            'max ack_pending',
            'drain s',
          ],
          [
            [
              fixed(produceRate, 0),
              fixed(persistRate, 0),
              fixed(result.rows_per_s_including_drain, 0),
              fixed(result.lag_s.p50, 2),
              fixed(result.lag_s.max, 2),
              result.max_num_pending,
              result.max_num_ack_pending,
              fixed(result.drain_after_stop_s, 2),
            ],
          ],
        ),
    );
    console.log(
      `\n${produced} updates acked (${failed} failed), ${last.rows} rows stored${result.drained ? '' : ` (not drained ${DRAIN_TIMEOUT_MS / 1000} s after the producers stopped)`}. Target ≥ 5,000 rows/s with lag < 1 s: ${result.target_met ? 'met' : 'missed'}. Result: ${path}`,
    );
  });
}

/** Journal rows per backlog session (the earlier throwaway drain measurement's shape). */
const DRAIN_ROWS_PER_SESSION = 60;
/**
 * Stored rows are read this often while history drains (crossings are interpolated in between).
 * Only from Postgres: polling the consumer's info this often during the drain cut history's rate
 * 3.5× on this box (1,400–1,700 instead of 5,800 rows/s), so it is read before and after only.
 */
const DRAIN_SAMPLE_MS = 200;

interface DrainSample {
  t_s: number;
  rows: number;
  /** History's CPU seconds (user + system) since it was started again. */
  cpu_s: number;
}

/** The moment (and history's CPU then) the stored rows reached `rows`, linear between samples. */
function crossing(samples: DrainSample[], rows: number): { t_s: number; cpu_s: number } | undefined {
  const index = samples.findIndex((s) => s.rows >= rows);
  if (index < 0) return undefined;
  const after = samples[index]!;
  const before = samples[index - 1];
  if (!before || after.rows === before.rows) return { t_s: after.t_s, cpu_s: after.cpu_s };
  const share = (rows - before.rows) / (after.rows - before.rows);
  return {
    t_s: before.t_s + share * (after.t_s - before.t_s),
    cpu_s: before.cpu_s + share * (after.cpu_s - before.cpu_s),
  };
}

/** Busy and total jiffies of the whole box (/proc/stat, Linux): how contended the cores were. */
function boxTicks(): { busy: number; total: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const total = fields.reduce((sum, value) => sum + value, 0);
    // idle + iowait are not busy.
    return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
  } catch {
    return null;
  }
}

interface DrainRound {
  round: number;
  rows_published: number;
  /** Rows of the round's sessions in `journal` after the drain. */
  rows_stored: number;
  /** Sessions whose head is their chain's last row (sequence and stream sequence). */
  sessions_complete: number;
  all_stored: boolean;
  publish_s: number;
  pending_before_start: number;
  pending_after: { num_pending: number; num_ack_pending: number };
  /** History spawned → its first row stored (process start, Nest boot, consumer attach). */
  first_row_s: number | null;
  /** First row → last row stored. */
  drain_s: number;
  rows_per_s_10_90: number;
  rows_per_s_overall: number;
  history_cpu_core_share_10_90: number;
  history_cpu_ms_per_row_10_90: number;
  box_busy_share: number | null;
  samples: DrainSample[];
}

interface DrainContext extends IngestStack {
  jsm: JetStreamManager;
  sessions: number;
  timeoutMs: number;
}

/** One round: history stopped, the backlog published, history started and timed until it stored all. */
async function drainRound(ctx: DrainContext, round: number): Promise<DrainRound> {
  const { tether, db, jsm } = ctx;
  const subjects = tether.stack.subjects;
  // Fresh sessions every round, so each round's history starts from the same state.
  const sessionIds = Array.from({ length: ctx.sessions }, (_, index) => opaqueId(0xd4a10 + round, index));
  // The durable consumer stays (history created it at boot): the backlog waits on it.
  await tether.stack.kill('history', 'SIGTERM');
  const backlog = await publishBacklog(ctx.edge.connection, subjects, {
    sessionIds,
    rowsPerSession: DRAIN_ROWS_PER_SESSION,
    edgeId: tether.edge.id,
    actorId: tether.owner,
    accessId: ctx.accessId,
  });
  const waiting = await jsm.consumers.info(subjects.sessionsStream, subjects.historyJournalConsumer);

  // Rows stored so far = the sum of the heads (each chain is 1..N without gaps, and a head moves in
  // the transaction that inserts its rows): a read of ≤ 512 small rows instead of counting a
  // growing table every sample, which would compete with history for the same cores.
  const storedRows = async () =>
    Number(
      (
        await db.query<{ n: string | null }>(
          'SELECT sum(head_sequence) AS n FROM journal_states WHERE session_id = ANY($1::text[])',
          [sessionIds],
        )
      ).rows[0]?.n ?? 0,
    );
  await tether.stack.start('history');
  const pid = tether.stack.pid('history');
  const start = performance.now();
  const boxStart = boxTicks();
  const cpuStart = cpuSecondsOf(pid) ?? 0;
  const samples: DrainSample[] = [];
  const deadline = start + ctx.timeoutMs;
  for (;;) {
    const rows = await storedRows();
    samples.push({
      t_s: (performance.now() - start) / 1000,
      rows,
      cpu_s: (cpuSecondsOf(pid) ?? cpuStart) - cpuStart,
    });
    if (rows >= backlog.rows || performance.now() > deadline) break;
    if (!tether.stack.running('history')) throw new Error('History exited during the drain.');
    await new Promise((resolve) => setTimeout(resolve, DRAIN_SAMPLE_MS));
  }
  const boxEnd = boxTicks();
  const left = await jsm.consumers.info(subjects.sessionsStream, subjects.historyJournalConsumer);

  // Every row stored, and every session's head where its chain ended.
  const check = await db.query<{ rows: string; complete: string }>(
    `SELECT (SELECT count(*) FROM journal WHERE session_id = ANY($1::text[])) AS rows,
            (SELECT count(*) FROM journal_states
              WHERE session_id = ANY($1::text[]) AND head_sequence = $2
                AND last_stream_seq = ANY($3::bigint[])) AS complete`,
    [sessionIds, DRAIN_ROWS_PER_SESSION, [...backlog.lastStreamSequence.values()]],
  );
  const stored = Number(check.rows[0]?.rows ?? 0);
  const complete = Number(check.rows[0]?.complete ?? 0);
  if (stored === 0) console.error(tether.stack.output().split('\n').slice(-40).join('\n'));

  const first = crossing(samples, 1);
  const at10 = crossing(samples, 0.1 * backlog.rows);
  const at90 = crossing(samples, 0.9 * backlog.rows);
  const done = crossing(samples, backlog.rows);
  const window = at10 && at90 ? at90.t_s - at10.t_s : Number.NaN;
  const cpu = at10 && at90 ? at90.cpu_s - at10.cpu_s : Number.NaN;
  const drainS = first && done ? done.t_s - first.t_s : Number.NaN;
  return {
    round,
    rows_published: backlog.rows,
    rows_stored: stored,
    sessions_complete: complete,
    all_stored: stored === backlog.rows && complete === ctx.sessions,
    publish_s: backlog.publish_s,
    pending_before_start: waiting.num_pending,
    pending_after: { num_pending: left.num_pending, num_ack_pending: left.num_ack_pending },
    first_row_s: first?.t_s ?? null,
    drain_s: drainS,
    rows_per_s_10_90: (0.8 * backlog.rows) / window,
    rows_per_s_overall: stored / drainS,
    history_cpu_core_share_10_90: cpu / window,
    history_cpu_ms_per_row_10_90: (1000 * cpu) / (0.8 * backlog.rows),
    box_busy_share:
      boxStart && boxEnd ? (boxEnd.busy - boxStart.busy) / (boxEnd.total - boxStart.total) : null,
    samples,
  };
}

async function drain(options: BenchOptions): Promise<void> {
  const sessions = options.quick ? 256 : 512;
  // Full: the median of three rounds (one drain lasts seconds, and single runs vary by ±20 %).
  const rounds = options.quick ? 1 : 3;
  const machine = machineFacts();
  await withIngestStack('benchdrain', async (stack) => {
    const ctx: DrainContext = {
      ...stack,
      jsm: await jetstreamManager(stack.edge.connection),
      sessions,
      // Far above the expected drain (seconds); bounds a history that stalls or dies.
      timeoutMs: options.quick ? 40_000 : 45_000,
    };
    console.log(
      `B4 ingest --drain: ${rounds} round(s) of ${sessions} sessions × ${DRAIN_ROWS_PER_SESSION} chained rows (${sessions * DRAIN_ROWS_PER_SESSION}) published with history stopped, then drained.`,
    );
    const results: DrainRound[] = [];
    for (let round = 0; round < rounds; round++) {
      const result = await drainRound(ctx, round);
      results.push(result);
      console.log(
        `round ${round + 1}: published ${result.rows_published} rows in ${fixed(result.publish_s, 1)} s (${result.pending_before_start} pending), ${result.rows_stored} stored, ${fixed(result.rows_per_s_10_90, 0)} rows/s 10→90 %`,
      );
    }
    const rate = median(results.map((r) => r.rows_per_s_10_90));
    const allStored = results.every((r) => r.all_stored);
    const summary = {
      mode: 'drain',
      sessions,
      rows_per_session: DRAIN_ROWS_PER_SESSION,
      rounds,
      rows_published: results.reduce((sum, r) => sum + r.rows_published, 0),
      rows_stored: results.reduce((sum, r) => sum + r.rows_stored, 0),
      all_stored: allStored,
      rows_per_s_10_90: rate,
      rows_per_s_overall: median(results.map((r) => r.rows_per_s_overall)),
      drain_s: median(results.map((r) => r.drain_s)),
      history_cpu_core_share_10_90: median(results.map((r) => r.history_cpu_core_share_10_90)),
      history_cpu_ms_per_row_10_90: median(results.map((r) => r.history_cpu_ms_per_row_10_90)),
      target: { rows_per_s: TARGET_ROWS_PER_S },
      target_met: allStored && rate >= TARGET_ROWS_PER_S,
    };
    const path = writeResult('ingest-drain', machine, { ...summary, results });
    const row = (label: string, r: Omit<DrainRound, 'round' | 'samples' | 'sessions_complete'>) => [
      label,
      r.rows_published,
      r.rows_stored,
      fixed(r.rows_per_s_10_90, 0),
      fixed(r.rows_per_s_overall, 0),
      fixed(r.drain_s, 2),
      r.first_row_s === null ? '-' : fixed(r.first_row_s, 2),
      fixed(100 * r.history_cpu_core_share_10_90, 0),
      fixed(r.history_cpu_ms_per_row_10_90, 3),
      r.box_busy_share === null ? '-' : fixed(100 * r.box_busy_share, 0),
    ];
    const rows = results.map((r) => row(String(r.round + 1), r));
    if (rounds > 1) {
      rows.push([
        'median',
        '',
        '',
        fixed(summary.rows_per_s_10_90, 0),
        fixed(summary.rows_per_s_overall, 0),
        fixed(summary.drain_s, 2),
        '',
        fixed(100 * summary.history_cpu_core_share_10_90, 0),
        fixed(summary.history_cpu_ms_per_row_10_90, 3),
        '',
      ]);
    }
    console.log(
      '\n' +
        table(
          [
            'round',
            'rows published',
            'rows stored',
            'rows/s 10→90 %',
            'rows/s overall',
            'drain s',
            'first row s',
            'history CPU % of a core',
            'CPU ms/row',
            'box busy %',
          ],
          rows,
        ),
    );
    console.log(
      `\n${summary.rows_stored} of ${summary.rows_published} rows stored${allStored ? ', every session at its last row' : ` (NOT all stored within ${ctx.timeoutMs / 1000} s of a start)`}. Result: ${path}`,
    );
    console.log(
      `History drain rate (10→90 %${rounds > 1 ? `, median of ${rounds} rounds` : ''}): ${fixed(rate, 0)} rows/s; target ≥ ${TARGET_ROWS_PER_S.toLocaleString('en-US')} rows/s: ${summary.target_met ? 'met' : 'missed'}.`,
    );
  });
}
