// B5 Gemini rows: what Tether adds to a Gemini CLI turn's dispatch and first reply over driving
// the CLI directly, and how long `start` takes with the edge's spare process. Both sides run the
// same Gemini CLI (`@google/gemini-cli`, the npm bundle) over ACP against the project's fake Gemini
// API, with the model pinned; their turns alternate so machine noise falls on both alike.
//
// direct:  the edge's ACP driver in this process (createAcpDriver().open(), no spare); dispatch =
//          `startTurn` resolved (the prompt handed to the CLI's stdin), first reply = the first
//          non-empty `message_delta`, both from the instant before `startTurn`.
// Tether:  the whole stack over HTTP (api → router → edge → the ACP driver → Gemini CLI), measured
//          as in bench/codex.ts: dispatch = the `send` round trip, first reply = the edge's
//          `turn_timing.first_reply_ms` plus the send's HTTP overhead (no watch coalescing pause).
// start:   the HTTP `start` round trip with the spare warm (its process booted and went idle), and
//          right after another start (the spare is still booting: roughly what a start costs
//          without one).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signToken, type TestDatabase } from '#test-support';
import type { AgentSession } from '../apps/edge-connector/src/agent/agent-driver.js';
import { createAcpDriver } from '../apps/edge-connector/src/agent/acp/index.js';
import type { Stack } from '../scripts/stack/launcher.js';
import {
  fakeGeminiEnv,
  geminiEntryPoint,
  pinFakeGeminiModel,
  startFakeGemini,
  type FakeGemini,
} from '../test/support/fake-gemini/index.js';
import { Client, type Snapshot } from './codex.js';
import {
  createAgentAccess,
  PROMPT,
  stopAgentStack,
  SETTLE_MS,
  startAgentStack,
  TARGET_ADDED_P50_MS,
  TURN_TIMEOUT_MS,
  TurnClock,
  WARMUP_TURNS,
  type DirectSample,
} from './lib/b5-turns.js';
import { machineFacts, writeResult } from './lib/machine.js';
import { fixed, latencyTable, median, summarize } from './lib/stats.js';
import { BENCH_JWT_SECRET } from './lib/tether.js';
import type { BenchOptions } from './run.js';

const REPLY =
  'The fake Gemini answers every benchmark turn with this same plain reply of 96 characters......';
/**
 * A spare counts as booted once its process used no CPU for this long (it initialized and now
 * waits for a session); Gemini CLI boots in ~1.7 s on an idle machine and ~10 s at load 20.
 */
const SPARE_IDLE_MS = 1_000;
const SPARE_BOOT_MAX_MS = 60_000;
const TARGET_START_P50_MS = 150;

const wait = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** CPU ticks of the processes whose working directory is `dir` (the edge's spare), or undefined. */
function cpuTicksIn(dir: string): number | undefined {
  let total: number | undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (realpathSync(`/proc/${entry}/cwd`) !== dir) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total = (total ?? 0) + Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended while we looked.
    }
  }
  return total;
}

/** Waits until the edge's spare process exists and has gone idle (it finished booting). */
async function spareBooted(dir: string): Promise<void> {
  const deadline = Date.now() + SPARE_BOOT_MAX_MS;
  let last = cpuTicksIn(dir);
  while (Date.now() < deadline) {
    await wait(SPARE_IDLE_MS);
    const now = cpuTicksIn(dir);
    if (now !== undefined && now === last) return;
    last = now;
  }
  throw new Error('The edge did not boot a spare Gemini CLI in time.');
}

/** One Gemini CLI session driven in this process through the edge's ACP driver. */
class DirectGemini {
  private session?: AgentSession;
  private readonly clock = new TurnClock();
  constructor(private readonly fake: FakeGemini) {}

  /**
   * The edge-side part of a start: `open()` of the edge's ACP driver in this process with its spare
   * booted (`session/new` on an initialized process), `count` times.
   */
  async driverStarts(dir: string, count: number): Promise<number[]> {
    const homes = join(dir, 'driver-homes');
    const project = join(dir, 'driver-project');
    mkdirSync(project, { recursive: true });
    await pinFakeGeminiModel(join(homes, 'gemini'));
    const driver = createAcpDriver({ ...this.driverConfig(homes), spares: true });
    const { installations } = await driver.discover();
    const installation = installations.find((entry) => entry.source === 'explicit');
    if (!installation) throw new Error('Gemini CLI was not discovered.');
    const samples: number[] = [];
    try {
      for (let index = 0; index < count; index++) {
        await spareBooted(join(homes, 'spare'));
        const began = performance.now();
        const session = await driver.open({
          installation,
          cwd: project,
          saved: true,
          onEvent: () => undefined,
        });
        samples.push(performance.now() - began);
        await session.close();
      }
    } finally {
      await driver.close();
    }
    return samples;
  }

  private driverConfig(homes: string) {
    return {
      geminiPath: geminiEntryPoint(process.cwd()),
      homesDir: homes,
      declared: [],
      allowRoot: true,
      environment: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        LANG: process.env.LANG,
        ...fakeGeminiEnv(this.fake),
      },
    };
  }

  async open(dir: string): Promise<void> {
    const homes = join(dir, 'direct-homes');
    const project = join(dir, 'direct-project');
    mkdirSync(project, { recursive: true });
    await pinFakeGeminiModel(join(homes, 'gemini'));
    const driver = createAcpDriver({
      ...this.driverConfig(homes),
      spares: false,
    });
    const { installations } = await driver.discover();
    const installation = installations.find((entry) => entry.source === 'explicit');
    if (!installation) throw new Error('Gemini CLI was not discovered.');
    this.session = await driver.open({
      installation,
      cwd: project,
      saved: true,
      onEvent: (event) => this.clock.onEvent(event),
    });
  }

  turn(): Promise<DirectSample> {
    const session = this.session;
    if (!session) throw new Error('The direct session is not open.');
    this.fake.script({ kind: 'text', text: REPLY });
    return this.clock.time(session);
  }

  close(): Promise<void> {
    return this.session?.close() ?? Promise.resolve();
  }
}

/** The full stack with the demo edge on Gemini CLI. */
class TetherGemini {
  readonly owner = `benchgemini${Date.now() % 100000}`;
  stack?: Stack;
  private database?: TestDatabase;
  client?: Client;
  private access = { edge: '', id: '', installation: '', project: '' };
  private base: Record<string, unknown> = {};

  async up(dir: string, serviceEnv: Record<string, string>): Promise<void> {
    const up = await startAgentStack(dir, 'benchgemini', this.owner, serviceEnv, {
      agent: 'gemini',
      edgeEnv: { TETHER_EDGE_ALLOW_ROOT: '1' },
      geminiFakeProvider: true,
    });
    ({ stack: this.stack, database: this.database } = up);
    this.client = new Client(up.stack.apiUrl, await signToken(BENCH_JWT_SECRET, this.owner));
    const edge = up.stack.edge!.id;
    const gemini = { kind: 'gemini', label: 'Gemini CLI' };
    const { installation, access } = await createAgentAccess(this.client, edge, gemini, up.project);
    this.access = { edge, id: access, installation, project: up.project };
  }

  /** One `start` round trip; the session is stopped again unless `keep`. */
  async start(keep = false): Promise<number> {
    const client = this.client!;
    const began = performance.now();
    const started = await client.agentAction({
      edge_id: this.access.edge,
      action: 'start',
      access_id: this.access.id,
      installation_id: this.access.installation,
      project: this.access.project,
    });
    const elapsed = performance.now() - began;
    const base = { edge_id: this.access.edge, access_id: this.access.id, session_id: started.session_id };
    if (keep) this.base = base;
    else await client.call('POST', '/api/v1/edge-agents', { ...base, action: 'stop' });
    return elapsed;
  }

  async turn(): Promise<{ dispatch: number; firstReply: number }> {
    const client = this.client!;
    this.stack!.fakeGemini!.script({ kind: 'text', text: REPLY });
    const deadline = Date.now() + TURN_TIMEOUT_MS;
    const started = performance.now();
    let snapshot: Snapshot = await client.agentAction({ ...this.base, action: 'send', text: PROMPT });
    const dispatch = performance.now() - started;
    while (snapshot.running === true) {
      if (Date.now() > deadline) throw new Error('A turn through Tether did not finish in time.');
      snapshot = await client.agentAction({
        ...this.base,
        action: 'watch',
        cursor: String(snapshot.revision ?? 0),
      });
    }
    const timing = snapshot.turn_timing;
    if (timing?.dispatch_ms == null || timing.first_reply_ms == null)
      throw new Error('A turn had no timing.');
    return { dispatch, firstReply: timing.first_reply_ms + (dispatch - timing.dispatch_ms) };
  }

  async down(): Promise<void> {
    this.client?.close();
    await stopAgentStack(this.stack, this.database);
  }
}

export async function gemini(options: BenchOptions): Promise<void> {
  const turns = options.quick ? 10 : 40;
  const starts = options.quick ? 4 : 10;
  const machine = machineFacts();
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'tether-bench-gemini-')));
  const tether = new TetherGemini();
  const fake = await startFakeGemini();
  const direct = new DirectGemini(fake);
  try {
    await tether.up(dir, options.serviceEnv);
    const warmStarts: number[] = [];
    const busyStarts: number[] = [];
    const spareDir = join(dir, 'edge', 'agent-homes', 'spare');
    for (let index = 0; index < starts; index++) {
      await spareBooted(spareDir);
      warmStarts.push(await tether.start());
      busyStarts.push(await tether.start());
    }
    await spareBooted(spareDir);
    await tether.start(true);
    const driverStarts = await direct.driverStarts(dir, starts);
    await direct.open(dir);
    console.log(
      `B5 gemini: ${starts} starts each way, ${turns} turns each way after ${WARMUP_TURNS} warm-up turns.`,
    );
    const directSamples: DirectSample[] = [];
    const tetherSamples: { dispatch: number; firstReply: number }[] = [];
    for (let index = 0; index < WARMUP_TURNS + turns; index++) {
      const order = index % 2 === 0 ? (['direct', 'tether'] as const) : (['tether', 'direct'] as const);
      for (const side of order) {
        const sample = side === 'direct' ? await direct.turn() : await tether.turn();
        if (index >= WARMUP_TURNS) (side === 'direct' ? directSamples : tetherSamples).push(sample);
        await wait(SETTLE_MS);
      }
    }
    const pick = (samples: typeof directSamples, key: 'dispatch' | 'firstReply') =>
      samples.map((s) => s[key]);
    const summaries = {
      direct_dispatch_ms: summarize(pick(directSamples, 'dispatch')),
      direct_first_reply_ms: summarize(pick(directSamples, 'firstReply')),
      tether_dispatch_ms: summarize(pick(tetherSamples, 'dispatch')),
      tether_first_reply_ms: summarize(pick(tetherSamples, 'firstReply')),
      start_spare_warm_ms: summarize(warmStarts),
      start_spare_booting_ms: summarize(busyStarts),
      driver_open_spare_warm_ms: summarize(driverStarts),
    };
    const added = (key: 'dispatch' | 'firstReply') => {
      const through = pick(tetherSamples, key);
      const base = pick(directSamples, key);
      return {
        p50_ms: summarize(through).p50 - summarize(base).p50,
        paired_median_ms: median(through.map((value, i) => value - (base[i] ?? Number.NaN))),
      };
    };
    const addedFigures = { dispatch: added('dispatch'), first_reply: added('firstReply') };
    const path = writeResult('gemini', machine, {
      turns,
      starts,
      warmup_turns: WARMUP_TURNS,
      spare_idle_ms: SPARE_IDLE_MS,
      latency: summaries,
      added: addedFigures,
      samples: {
        direct: directSamples,
        tether: tetherSamples,
        warm_starts: warmStarts,
        busy_starts: busyStarts,
      },
      target: { added_p50_ms: TARGET_ADDED_P50_MS, start_p50_ms: TARGET_START_P50_MS },
      target_met: {
        dispatch: addedFigures.dispatch.p50_ms <= TARGET_ADDED_P50_MS,
        first_reply: addedFigures.first_reply.p50_ms <= TARGET_ADDED_P50_MS,
        start: summaries.start_spare_warm_ms.p50 <= TARGET_START_P50_MS,
      },
      service_env: options.serviceEnv,
    });
    console.log(
      '\n' +
        latencyTable([
          ['direct dispatch (startTurn)', summaries.direct_dispatch_ms],
          ['direct first reply (first message_delta)', summaries.direct_first_reply_ms],
          ['Tether dispatch (send round trip)', summaries.tether_dispatch_ms],
          ['Tether first reply (edge + send overhead)', summaries.tether_first_reply_ms],
          ['Tether start, spare warm', summaries.start_spare_warm_ms],
          ['Tether start, spare still booting', summaries.start_spare_booting_ms],
          ['  edge part: driver open, spare warm', summaries.driver_open_spare_warm_ms],
        ]) +
        `\n\nadded by Tether: dispatch p50 ${fixed(addedFigures.dispatch.p50_ms)} ms (paired ${fixed(addedFigures.dispatch.paired_median_ms)}), ` +
        `first reply p50 ${fixed(addedFigures.first_reply.p50_ms)} ms (paired ${fixed(addedFigures.first_reply.paired_median_ms)}). Result: ${path}`,
    );
  } catch (error) {
    if (tether.stack) console.error(tether.stack.output().split('\n').slice(-60).join('\n'));
    throw error;
  } finally {
    await direct.close();
    await fake.stop();
    await tether.down();
    rmSync(dir, { recursive: true, force: true });
  }
}
