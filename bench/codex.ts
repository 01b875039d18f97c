// B5 agent overhead: what Tether adds to a turn's dispatch and first reply, against driving the
// agent binary directly through the edge's own driver: `codex app-server` (`npm run bench --
// codex`) or Claude Code's `claude -p` stream-json (`npm run bench -- claude`). Both sides run the
// same binary against the project's scripted provider fake (one plain-text reply per turn, a fixed
// number of deltas), and their turns alternate one by one so machine noise falls on both alike.
//
// direct:  the agent's driver `.open()` in this process; dispatch = `startTurn` resolved, first
//          reply = the first non-empty `message_delta`, both from the instant before `startTurn`.
// Tether:  the whole stack over HTTP (api → router → edge → the same driver → app-server).
//          Client view: dispatch = the `send` round trip (the edge answers a send once the turn is
//          dispatched), first reply = the first `watch` reply whose assistant text is non-empty,
//          with the watch loop started as soon as the send answered. First reply is also given as
//          the edge's own `turn_timing.first_reply_ms` plus the HTTP overhead of the send (client
//          send round trip minus the edge's `dispatch_ms`), which no watch timing touches. The
//          watch requests a turn takes, from the send to idle, show what a watching client costs.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Limits } from '#contracts';
import { signToken, type TestDatabase } from '#test-support';
import type { Stack } from '../scripts/stack/launcher.js';
import { claudeAgent, codexAgent, type B5Agent, type DirectHandle } from './lib/b5-agents.js';
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
import { cpuSecondsOf, machineFacts, writeResult } from './lib/machine.js';
import { fixed, latencyTable, median, summarize, table } from './lib/stats.js';
import { BENCH_JWT_SECRET } from './lib/tether.js';
import type { BenchOptions } from './run.js';

/** 96 characters: the fake cuts replies into 12-character deltas, so every turn streams 8. */
const REPLY =
  'The scripted provider answers every benchmark turn with this same plain reply of 96 chars.......';
const { WATCH_COALESCE_MS } = Limits;

export interface Snapshot {
  status: string;
  session_id?: string;
  revision?: number;
  running?: boolean;
  messages?: { role: string; text?: string }[];
  installations?: { id: string; kind: string }[];
  turn_timing?: { dispatch_ms?: number | null; first_reply_ms?: number | null; finished_ms?: number | null };
}

interface TetherSample {
  /** Client: send issued → send answered. */
  dispatch: number;
  /** Client: send issued → first watch (or the send itself) with a non-empty assistant reply. */
  firstReply: number;
  /** Edge-reported turn_timing. */
  edgeDispatch: number;
  edgeFirstReply: number;
  /** Watch requests the client made before the reply showed. */
  watches: number;
  /** Watch requests the client made from the send until the turn was over. */
  watchesPerTurn: number;
  /** The NATS requests that passed during the send, from the tap (not written to the result). */
  sendHops: Hop[];
  sendStart: number;
}

function wait(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

function hasReply(snapshot: Snapshot): boolean {
  const last = snapshot.messages?.at(-1);
  return last?.role === 'assistant' && (last.text ?? '') !== '';
}

/** The api over one keep-alive connection (no fetch/undici layer in the timed path). */
export class Client {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  call<T>(method: string, path: string, body: unknown): Promise<T> {
    const payload = JSON.stringify(body);
    return new Promise((done, fail) => {
      const req = request(
        new URL(path, this.baseUrl),
        {
          method,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${this.token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const raw = Buffer.concat(chunks).toString();
            if (res.statusCode !== 200) {
              fail(new Error(`${method} ${path} answered HTTP ${res.statusCode}: ${raw}`));
              return;
            }
            done((JSON.parse(raw) as { data: T }).data);
          });
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      req.end(payload);
    });
  }

  async agentAction(body: Record<string, unknown>): Promise<Snapshot> {
    const snapshot = await this.call<Snapshot>('POST', '/api/v1/edge-agents', body);
    if (snapshot.status !== 'ok') throw new Error(`${String(body.action)} answered ${snapshot.status}`);
    return snapshot;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** One session driven in this process through the edge's own driver for the agent. */
class DirectAgent {
  private handle?: DirectHandle;
  private readonly clock = new TurnClock();

  static async open(agent: B5Agent, dir: string): Promise<DirectAgent> {
    const direct = new DirectAgent();
    direct.handle = await agent.openDirect(dir, (event) => direct.clock.onEvent(event));
    return direct;
  }

  get remaining(): number {
    return this.handle?.remaining() ?? 0;
  }

  turn(): Promise<DirectSample> {
    const handle = this.handle;
    if (!handle) throw new Error('The direct session is not open.');
    handle.script(REPLY);
    return this.clock.time(handle.session);
  }

  async close(): Promise<void> {
    await this.handle?.stop();
  }
}

/** One NATS request seen by the tap: its subject (ids replaced by `*`) and when it and its reply passed. */
interface Hop {
  subject: string;
  start: number;
  end: number;
}

/** ` (send)` for an edge_agent request (api → router, router → edge), else nothing. */
function actionOf(data: Uint8Array): string {
  try {
    const body = JSON.parse(Buffer.from(data).toString()) as { request?: { action?: unknown } };
    return typeof body.request?.action === 'string' ? ` (${body.request.action})` : '';
  } catch {
    return '';
  }
}

/**
 * A passive NATS subscriber on the run's namespace and on every inbox: it sees each request and its
 * reply as they pass through the server, so a send's time splits into its NATS hops without
 * touching the services. Its clock is this process's performance.now(), the client's clock.
 */
class NatsTap {
  private readonly pending = new Map<string, { subject: string; start: number }>();
  readonly hops: Hop[] = [];

  private constructor(private readonly nc: NatsConnection) {}

  static async open(natsUrl: string, namespace: string): Promise<NatsTap> {
    const nc = await connect({ servers: natsUrl.split(','), name: 'bench-codex-tap' });
    const tap = new NatsTap(nc);
    const label = (subject: string) =>
      subject
        .slice(namespace.length + 1)
        .replace(/^edge\.[^.]+\./, 'edge.*.')
        .replace(/^session\.[^.]+\./, 'session.*.');
    nc.subscribe(`${namespace}.>`, {
      callback: (error, msg) => {
        if (error || !msg.reply) return;
        const start = performance.now();
        tap.pending.set(msg.reply, { subject: label(msg.subject) + actionOf(msg.data), start });
      },
    });
    nc.subscribe('_INBOX.>', {
      callback: (error, msg) => {
        const request = error ? undefined : tap.pending.get(msg.subject);
        if (!request) return;
        tap.pending.delete(msg.subject);
        tap.hops.push({ ...request, end: performance.now() });
      },
    });
    await nc.flush();
    return tap;
  }

  /** Hops that started and ended inside [from, to]; forgets everything older than `to`. */
  take(from: number, to: number): Hop[] {
    const inside = this.hops.filter((hop) => hop.start >= from && hop.end <= to);
    this.hops.length = 0;
    // Requests never answered (none expected) must not pile up over a long run.
    if (this.pending.size > 1_000) this.pending.clear();
    return inside;
  }

  async close(): Promise<void> {
    await this.nc.close();
  }
}

/** Per hop subject over all sends: in how many it showed, its median duration and start offset. */
function breakdown(sends: { hops: Hop[]; start: number }[]): {
  subject: string;
  per_send: number;
  duration_ms_p50: number;
  start_offset_ms_p50: number;
}[] {
  const bySubject = new Map<string, { counts: number[]; durations: number[]; offsets: number[] }>();
  sends.forEach((send, index) => {
    for (const hop of send.hops) {
      const entry = bySubject.get(hop.subject) ?? {
        counts: new Array<number>(sends.length).fill(0),
        durations: [],
        offsets: [],
      };
      entry.counts[index] = (entry.counts[index] ?? 0) + 1;
      entry.durations.push(hop.end - hop.start);
      entry.offsets.push(hop.start - send.start);
      bySubject.set(hop.subject, entry);
    }
  });
  return [...bySubject.entries()]
    .map(([subject, entry]) => ({
      subject,
      per_send: entry.counts.reduce((sum, count) => sum + count, 0) / sends.length,
      duration_ms_p50: median(entry.durations),
      start_offset_ms_p50: median(entry.offsets),
    }))
    .sort((a, b) => a.start_offset_ms_p50 - b.start_offset_ms_p50);
}

/** The full stack with the demo edge on the agent, one session open through the api. */
class TetherAgent {
  readonly owner = `bench${Date.now() % 100000}`;
  stack?: Stack;
  private database?: TestDatabase;
  private client?: Client;
  private base: Record<string, unknown> = {};
  private tap?: NatsTap;

  constructor(private readonly agent: B5Agent) {}

  async up(dir: string, serviceEnv: Record<string, string> = {}): Promise<void> {
    const label = `bench${this.agent.kind}`;
    const up = await startAgentStack(dir, label, this.owner, serviceEnv, this.agent.stackOptions());
    ({ stack: this.stack, database: this.database } = up);
    this.tap = await NatsTap.open(up.stack.options.natsUrl, up.stack.subjects.namespace);
    this.client = new Client(up.stack.apiUrl, await signToken(BENCH_JWT_SECRET, this.owner));
    const edgeId = up.stack.edge!.id;
    const { installation, access } = await createAgentAccess(this.client, edgeId, this.agent, up.project);
    const started = await this.client.agentAction({
      edge_id: edgeId,
      action: 'start',
      access_id: access,
      installation_id: installation,
      project: up.project,
    });
    this.base = { edge_id: edgeId, access_id: access, session_id: started.session_id };
  }

  async turn(): Promise<TetherSample> {
    const client = this.client;
    const stack = this.stack;
    if (!client || !stack || !this.tap) throw new Error('Tether is not up.');
    this.agent.scriptTether(stack, REPLY);
    const deadline = Date.now() + TURN_TIMEOUT_MS;
    const started = performance.now();
    let snapshot = await client.agentAction({ ...this.base, action: 'send', text: PROMPT });
    const dispatch = performance.now() - started;
    const sendHops = this.tap.take(started, started + dispatch);
    let firstReply = hasReply(snapshot) ? dispatch : undefined;
    let watches = 0;
    let watchesPerTurn = 0;
    // Watch the way a browser does, until the turn is over (the next turn needs an idle session).
    // An idle snapshot leaves `running` out.
    while (snapshot.running === true) {
      if (Date.now() > deadline) throw new Error('A turn through Tether did not finish in time.');
      const cursor = String(snapshot.revision ?? 0);
      snapshot = await client.agentAction({ ...this.base, action: 'watch', cursor });
      watchesPerTurn++;
      if (firstReply === undefined) {
        watches++;
        if (hasReply(snapshot)) firstReply = performance.now() - started;
      }
    }
    const timing = snapshot.turn_timing;
    if (firstReply === undefined || timing?.dispatch_ms == null || timing.first_reply_ms == null) {
      throw new Error('A turn through Tether finished without a reply or its timing.');
    }
    return {
      dispatch,
      firstReply,
      edgeDispatch: timing.dispatch_ms,
      edgeFirstReply: timing.first_reply_ms,
      watches,
      watchesPerTurn,
      sendHops,
      sendStart: started,
    };
  }

  /** CPU seconds used so far by each service process. */
  cpu(): Record<string, number | null> {
    const names = ['api', 'router', 'edge', 'history'] as const;
    return Object.fromEntries(names.map((name) => [name, cpuSecondsOf(this.stack?.pid(name))]));
  }

  async down(): Promise<void> {
    this.client?.close();
    await this.tap?.close();
    await stopAgentStack(this.stack, this.database);
  }
}

export function codex(options: BenchOptions): Promise<void> {
  return agentOverhead(options, codexAgent());
}

export function claude(options: BenchOptions): Promise<void> {
  return agentOverhead(options, claudeAgent());
}

async function agentOverhead(options: BenchOptions, agent: B5Agent): Promise<void> {
  const turns = options.quick ? 10 : 40;
  const machine = machineFacts();
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `tether-bench-${agent.kind}-`)));
  const tether = new TetherAgent(agent);
  let direct: DirectAgent | undefined;
  try {
    await tether.up(dir, options.serviceEnv);
    direct = await DirectAgent.open(agent, dir);
    console.log(
      `B5 ${agent.kind}: ${turns} turns each way after ${WARMUP_TURNS} warm-up turns, alternating direct and through Tether; ` +
        `reply of ${REPLY.length} characters in ${Math.ceil(REPLY.length / 12)} deltas; ${agent.label} ${agent.binary}.`,
    );
    const directSamples: DirectSample[] = [];
    const tetherSamples: TetherSample[] = [];
    let cpuBefore: Record<string, number | null> = {};
    for (let index = 0; index < WARMUP_TURNS + turns; index++) {
      if (index === WARMUP_TURNS) cpuBefore = tether.cpu();
      // Alternate which side goes first so neither always follows the other's leftovers.
      const order = index % 2 === 0 ? (['direct', 'tether'] as const) : (['tether', 'direct'] as const);
      for (const side of order) {
        if (side === 'direct') {
          const sample = await direct.turn();
          if (index >= WARMUP_TURNS) directSamples.push(sample);
        } else {
          const sample = await tether.turn();
          if (index >= WARMUP_TURNS) tetherSamples.push(sample);
        }
        await wait(SETTLE_MS);
      }
    }
    const cpuAfter = tether.cpu();
    const cpuMsPerTurn = Object.fromEntries(
      Object.entries(cpuAfter).map(([name, after]) => {
        const before = cpuBefore[name];
        return [name, after == null || before == null ? null : ((after - before) * 1000) / turns];
      }),
    );
    if (direct.remaining !== 0 || (tether.stack ? agent.remainingTether(tether.stack) : 0) !== 0) {
      throw new Error(
        `${agent.label} made a different number of provider requests than turns; the figures are off.`,
      );
    }

    const pick = <T>(samples: T[], value: (sample: T) => number): number[] => samples.map(value);
    const directDispatch = pick(directSamples, (s) => s.dispatch);
    const directFirst = pick(directSamples, (s) => s.firstReply);
    const clientDispatch = pick(tetherSamples, (s) => s.dispatch);
    const clientFirst = pick(tetherSamples, (s) => s.firstReply);
    const sendOverhead = pick(tetherSamples, (s) => s.dispatch - s.edgeDispatch);
    const estimatedFirst = pick(tetherSamples, (s) => s.edgeFirstReply + (s.dispatch - s.edgeDispatch));
    const summaries = {
      direct_dispatch_ms: summarize(directDispatch),
      direct_first_reply_ms: summarize(directFirst),
      tether_client_dispatch_ms: summarize(clientDispatch),
      tether_edge_dispatch_ms: summarize(pick(tetherSamples, (s) => s.edgeDispatch)),
      tether_client_first_reply_ms: summarize(clientFirst),
      tether_edge_first_reply_ms: summarize(pick(tetherSamples, (s) => s.edgeFirstReply)),
      tether_first_reply_estimate_ms: summarize(estimatedFirst),
      tether_send_http_overhead_ms: summarize(sendOverhead),
    };
    const added = (through: number[], base: number[]) => {
      const a = summarize(through);
      const b = summarize(base);
      return {
        p50_ms: a.p50 - b.p50,
        p99_ms: a.p99 - b.p99,
        // Turn i of one side ran right beside turn i of the other: the median of those differences.
        paired_median_ms: median(through.map((value, index) => value - (base[index] ?? Number.NaN))),
      };
    };
    const addedFigures = {
      dispatch: added(clientDispatch, directDispatch),
      first_reply_client_watch: added(clientFirst, directFirst),
      first_reply_estimate_without_coalesce: added(estimatedFirst, directFirst),
    };
    const sendBreakdown = breakdown(tetherSamples.map((s) => ({ hops: s.sendHops, start: s.sendStart })));
    const watchesBeforeReply = median(pick(tetherSamples, (s) => s.watches));
    const watchesPerTurn = median(pick(tetherSamples, (s) => s.watchesPerTurn));
    const result = {
      turns,
      warmup_turns: WARMUP_TURNS,
      reply_chars: REPLY.length,
      deltas_per_reply: Math.ceil(REPLY.length / 12),
      settle_ms: SETTLE_MS,
      agent: agent.kind,
      agent_binary: agent.binary,
      watch_coalesce_ms: WATCH_COALESCE_MS,
      latency: summaries,
      added: addedFigures,
      watches_before_reply_median: watchesBeforeReply,
      watches_per_turn_median: watchesPerTurn,
      cpu_ms_per_tether_turn: cpuMsPerTurn,
      send_hops: sendBreakdown,
      samples: {
        direct: directSamples,
        tether: tetherSamples.map(({ sendHops: _hops, sendStart: _start, ...rest }) => rest),
      },
      note:
        'Direct and Tether turns alternate. Tether client dispatch = HTTP send round trip (the edge answers once startTurn resolved); ' +
        'client first reply = send → first watch reply with non-empty assistant text (watch loop started after the send answered; ' +
        `the router answers the first change after a quiet spell at once and a burst at most once per WATCH_COALESCE_MS = ${WATCH_COALESCE_MS} ms). ` +
        'first_reply_estimate = edge turn_timing.first_reply_ms + (client send round trip − edge dispatch_ms): the reply with no watch timing in it.',
      target: { added_p50_ms: TARGET_ADDED_P50_MS },
      target_met: {
        dispatch: addedFigures.dispatch.p50_ms <= TARGET_ADDED_P50_MS,
        first_reply_client_watch: addedFigures.first_reply_client_watch.p50_ms <= TARGET_ADDED_P50_MS,
        first_reply_estimate_without_coalesce:
          addedFigures.first_reply_estimate_without_coalesce.p50_ms <= TARGET_ADDED_P50_MS,
      },
    };
    const path = writeResult(agent.kind, machine, { ...result, service_env: options.serviceEnv });

    console.log(
      '\n' +
        latencyTable([
          ['direct dispatch (startTurn)', summaries.direct_dispatch_ms],
          ['direct first reply (first message_delta)', summaries.direct_first_reply_ms],
          ['Tether dispatch, client (send round trip)', summaries.tether_client_dispatch_ms],
          ['Tether dispatch, edge turn_timing', summaries.tether_edge_dispatch_ms],
          ['Tether send HTTP overhead (client − edge)', summaries.tether_send_http_overhead_ms],
          ['Tether first reply, client (watch)', summaries.tether_client_first_reply_ms],
          ['Tether first reply, edge turn_timing', summaries.tether_edge_first_reply_ms],
          ['Tether first reply, edge + send overhead', summaries.tether_first_reply_estimate_ms],
        ]),
    );
    const addedRow = (
      label: string,
      figure: { p50_ms: number; p99_ms: number; paired_median_ms: number },
    ) => [
      label,
      fixed(figure.p50_ms),
      fixed(figure.p99_ms),
      fixed(figure.paired_median_ms),
      figure.p50_ms <= TARGET_ADDED_P50_MS ? 'met' : 'missed',
    ];
    console.log(
      '\n' +
        table(
          [
            'added by Tether (through − direct)',
            'p50 ms',
            'p99 ms',
            'paired median ms',
            `p50 ≤ ${TARGET_ADDED_P50_MS} ms`,
          ],
          [
            addedRow('dispatch (client send)', addedFigures.dispatch),
            addedRow('first reply, client watch', addedFigures.first_reply_client_watch),
            addedRow('first reply, edge + send overhead', addedFigures.first_reply_estimate_without_coalesce),
          ],
        ),
    );
    console.log(
      '\nNATS requests during a send (passive tap; offset from the client issuing the send):\n' +
        table(
          ['subject', 'per send', 'start offset p50 ms', 'duration p50 ms'],
          sendBreakdown.map((hop) => [
            hop.subject,
            fixed(hop.per_send, 1),
            fixed(hop.start_offset_ms_p50),
            fixed(hop.duration_ms_p50),
          ]),
        ),
    );
    console.log(
      `\nService CPU ms per Tether turn: ${Object.entries(cpuMsPerTurn)
        .map(([name, value]) => `${name} ${value == null ? '-' : fixed(value, 1)}`)
        .join(', ')} (the direct turns in between add only heartbeats). ` +
        `Median watches before the reply showed: ${watchesBeforeReply}; per turn: ${watchesPerTurn}. Result: ${path}`,
    );
  } catch (error) {
    if (tether.stack) console.error(tether.stack.output().split('\n').slice(-60).join('\n'));
    throw error;
  } finally {
    await direct?.close();
    await tether.down();
    rmSync(dir, { recursive: true, force: true });
  }
}
