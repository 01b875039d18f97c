// B4 history ingest: journal rows persisted per second and the history consumer's lag under a
// steady stream of session updates, sent by a raw NATS client posing as the enrolled edge through
// the router's session-update path (acked once JetStream stored each entry). The rate is read
// from Postgres row counts; the lag from the JetStream consumer info and from the row counts.
import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { requestService } from '#messaging';
import { FakeEdge, opaqueId } from './lib/fake-edge.js';
import { machineFacts, writeResult } from './lib/machine.js';
import { fixed, median, table } from './lib/stats.js';
import { BENCH_EDGE_SECRET, BenchTether } from './lib/tether.js';
import type { BenchOptions } from './run.js';

const SAMPLE_MS = 250;
/** Session updates in flight (each producer owns its sessions, so a session's revisions stay in order). */
const PRODUCERS = 32;
/** How long the consumer may take to catch up after the producers stop. */
const DRAIN_TIMEOUT_MS = 60_000;

interface Sample {
  t_s: number;
  produced: number;
  rows: number;
  num_pending: number;
  num_ack_pending: number;
}

export async function ingest(options: BenchOptions): Promise<void> {
  const sessionsCount = options.quick ? 96 : 512;
  const durationMs = options.quick ? 10_000 : 30_000;
  const machine = machineFacts();
  const tether = new BenchTether({ label: 'benchingest', edge: false });
  let edge: FakeEdge | undefined;
  let db: pg.Client | undefined;
  try {
    await tether.up();
    const subjects = tether.stack.subjects;
    edge = await FakeEdge.connect(tether.stack.options.natsUrl, subjects, tether.edge.id, BENCH_EDGE_SECRET);
    // History keeps journal rows of saved sessions only: create a real access for them.
    const access = await requestService(
      edge.connection,
      subjects,
      'historyAccessCreate',
      {
        actor_id: tether.owner,
        access: {
          name: 'bench',
          kind: 'scripted',
          edge_id: tether.edge.id,
          installation_id: opaqueId(0x1, 1),
          project: '/tmp',
        },
      },
      { timeoutMs: 10_000 },
    );
    const accessId = access.access.id;
    db = new pg.Client({ connectionString: tether.databaseUrl });
    await db.connect();
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
          await edge!.update(id, tether.owner, { accessId, text: `delta ${turn} `.repeat(20) });
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
        db!.query<{ n: string }>('SELECT count(*) AS n FROM journal'),
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
      target: { rows_per_s: 5_000, lag_s: 1 },
      target_met: persistRate >= 5_000 && Math.max(...lags) < 1,
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
  } catch (error) {
    console.error(tether.stack?.output().split('\n').slice(-60).join('\n'));
    throw error;
  } finally {
    await db?.end();
    await edge?.close();
    await tether.down();
  }
}
