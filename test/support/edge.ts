// What the suites that drive a real edge connector over the shared NATS have in common: a
// namespace of their own, a raw responder standing in for the router's session-update subject
// (it acks and records every update), an edge_agent_v1 client of the edge, starting an edge and
// waiting until it answers, and killing the agent processes a test left behind.
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from '@jest/globals';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  Limits,
  Subjects,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
  type ResumeState,
  type SessionUpdate,
} from '#contracts';
import { connectNats, decodeJson, encodeJson, requestJson } from '#messaging';
import { sleep, testServices, uniqueNamespace } from '#test-support';
import { loadEdgeConfig } from '../../apps/edge-connector/src/config.js';
import { startEdge, type RunningEdge } from '../../apps/edge-connector/src/app.js';

export type EdgeRequest = Partial<EdgeAgentRequest> & { action: EdgeAgentRequest['action'] };

export class AgentEdgeBus {
  nc!: NatsConnection;
  subjects!: Subjects;
  natsUrl!: string;
  /** Every session update the edge sent, acked, in arrival order. */
  readonly updates: SessionUpdate[] = [];
  private responder?: Subscription;

  constructor(
    readonly edgeId: string,
    private readonly prefix: string,
    /** The access the suite's sessions and the readiness probe name (any id does). */
    readonly access = 'a'.repeat(32),
    private readonly actor = '7',
  ) {}

  async open(): Promise<void> {
    this.natsUrl = (await testServices()).natsUrl;
    this.subjects = new Subjects(uniqueNamespace(this.prefix));
    this.nc = await connectNats({ servers: this.natsUrl, name: `${this.prefix}-test` });
    this.responder = this.nc.subscribe(this.subjects.sessionUpdateWildcard, {
      callback: (_error, msg) => {
        this.updates.push(decodeJson<SessionUpdate>(msg.data));
        msg.respond(encodeJson({ ok: true, epoch: 'e1', sequence: this.updates.length, duplicate: false }));
      },
    });
    await this.nc.flush();
  }

  async close(): Promise<void> {
    this.responder?.unsubscribe();
    await this.nc?.drain();
  }

  rpc(
    request: EdgeRequest,
    envelope: Partial<EdgeAgentRPCRequest> = {},
    timeoutMs: number = Limits.ROUTER_EDGE_RPC_TIMEOUT_MS,
  ): Promise<EdgeAgentResult> {
    return requestJson<EdgeAgentResult>(
      this.nc,
      this.subjects.edgeRpc(this.edgeId),
      { version: 1, actor_id: this.actor, ...envelope, request: { edge_id: this.edgeId, ...request } },
      { timeoutMs },
    );
  }

  on(sessionId: string): { session_id: string; access_id: string } {
    return { session_id: sessionId, access_id: this.access };
  }

  /** Polls, then watches as a client would, until `done` holds; fails naming `what` after `waitMs`. */
  async watchUntil(
    sessionId: string,
    done: (snapshot: EdgeAgentResult) => boolean,
    what: string,
    waitMs: number,
  ): Promise<EdgeAgentResult> {
    const deadline = Date.now() + waitMs;
    let snapshot = await this.rpc({ action: 'poll', ...this.on(sessionId) });
    while (!done(snapshot)) {
      if (Date.now() > deadline)
        throw new Error(`Timed out waiting for ${what}: ${JSON.stringify(snapshot)}`);
      snapshot = await this.rpc({
        action: 'watch',
        ...this.on(sessionId),
        cursor: String(snapshot.revision),
      });
    }
    return snapshot;
  }

  /**
   * The manager's resume seed of a session, built from the last state the edge reported (what
   * the router stored), with that state.
   */
  resumeSeed(sessionId: string): { last: EdgeAgentResult; seed: ResumeState } {
    const last = this.updates.filter((update) => update.session_id === sessionId).at(-1)!.snapshot;
    const seed: ResumeState = {
      session_id: sessionId,
      messages: last.messages?.map((message) => ({ role: message.role, text: message.text })),
      activities: last.activities,
      title: last.title,
      model: last.model,
      started_at: last.started_at,
      revision: last.revision!,
      window: last.window,
      truncated: last.truncated,
    };
    return { last, seed };
  }

  send(sessionId: string, text: string): Promise<EdgeAgentResult> {
    return this.rpc({ action: 'send', ...this.on(sessionId), text });
  }

  /** A send the edge accepted: the turn is running. */
  async sendOk(sessionId: string, text: string): Promise<EdgeAgentResult> {
    const sent = await this.send(sessionId, text);
    expect(sent).toMatchObject({ status: 'ok', running: true });
    return sent;
  }

  /** The installation the edge was pointed at (`source: explicit`), which must be of `kind`. */
  async explicitInstallation(kind: string): Promise<string> {
    const discovered = await this.rpc({ action: 'discover' });
    expect(discovered.status).toBe('ok');
    const explicit = discovered.installations?.find((entry) => entry.source === 'explicit');
    expect(explicit).toMatchObject({ kind });
    return explicit!.id;
  }

  /** Starts a saved session of the explicit installation in `project`. */
  startSession(kind: string, project: string): Promise<EdgeAgentResult> {
    return this.explicitInstallation(kind).then((installation) =>
      this.rpc(
        { action: 'start', installation_id: installation, project, access_id: this.access },
        { project_root: project },
      ),
    );
  }

  /** Starts an edge on this bus with `env` over the common variables; resolves once it answers. */
  async start(env: Record<string, string | undefined>, waitMs: number): Promise<RunningEdge> {
    const edge = await startEdge(
      loadEdgeConfig({
        TETHER_NATS_URL: this.natsUrl,
        TETHER_NAMESPACE: this.subjects.namespace,
        TETHER_LOG_LEVEL: 'error',
        TETHER_EDGE_ID: this.edgeId,
        TETHER_EDGE_TOKEN: `${this.prefix}-edge-token-for-tests`,
        // CI runs as root; the root refusal itself is tested in the driver suites.
        TETHER_EDGE_ALLOW_ROOT: 'true',
        ...env,
      }),
    );
    // The RPC subscription reaches the server asynchronously: wait until the edge answers.
    const deadline = Date.now() + waitMs;
    for (;;) {
      try {
        await this.rpc({ action: 'sessions', access_id: this.access }, {}, 1_000);
        return edge;
      } catch (error) {
        if (Date.now() > deadline) {
          await edge.close();
          throw error;
        }
        await sleep(50);
      }
    }
  }
}

/** Children of this process whose working directory is under `dir` (agent processes it launched). */
export function childrenIn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cwd = realpathSync(`/proc/${entry}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** Kills the process group of every agent a test left under `dir`: nothing may outlive a test. */
export function killAgentsIn(dir: string): void {
  for (const pid of childrenIn(dir)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** Stops a test's edge, its agents and its provider, and removes its folder. */
/**
 * A case's scratch folders under a fresh temporary directory (its real path: macOS links /tmp):
 * the project and the agent's HOME made, the edge's data directory named.
 */
export async function caseDirs(prefix: string): Promise<{ base: string; project: string; dataDir: string }> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), `tether-${prefix}-`)));
  const dirs = { base, project: path.join(base, 'project'), dataDir: path.join(base, 'data') };
  await Promise.all([mkdir(dirs.project), mkdir(path.join(base, 'home'))]);
  return dirs;
}

export async function tearDownCase(c: {
  edge: RunningEdge;
  base: string;
  provider: { stop(): Promise<void> };
}): Promise<void> {
  await c.edge.close();
  killAgentsIn(c.base);
  await c.provider.stop();
  await rm(c.base, { recursive: true, force: true });
}

/**
 * The client steps an agent suite drives its edge with, bounded by `waitMs`: watch until a
 * condition holds, until the turn is over (every finished turn carries ordered timing), an
 * accepted send, and the bus's raw RPC.
 */
export function clientSteps(bus: AgentEdgeBus, waitMs: number) {
  const watch = (sessionId: string, done: (snapshot: EdgeAgentResult) => boolean, what: string) =>
    bus.watchUntil(sessionId, done, what, waitMs);
  return {
    rpc: bus.rpc.bind(bus),
    on: (sessionId: string) => bus.on(sessionId),
    watch,
    untilIdle: async (sessionId: string): Promise<EdgeAgentResult> => {
      const idle = await watch(sessionId, (snapshot) => !snapshot.running, 'the turn to finish');
      expectOrderedTiming(idle);
      return idle;
    },
    send: (sessionId: string, text: string) => bus.sendOk(sessionId, text),
  };
}

/** The steps of an agent suite a shared scenario drives. */
export interface AgentSteps {
  start(project?: string): Promise<EdgeAgentResult>;
  send(sessionId: string, text: string): Promise<EdgeAgentResult>;
  watch(
    sessionId: string,
    done: (snapshot: EdgeAgentResult) => boolean,
    what: string,
  ): Promise<EdgeAgentResult>;
  untilIdle(sessionId: string): Promise<EdgeAgentResult>;
  base: string;
  project: string;
}

/**
 * The agent process of one session is killed mid-turn (the provider hangs its first reply, then
 * answers "still here"): that session closes without turn timing, and a second session of the
 * same edge, in another project, still answers.
 */
export async function expectOneOfTwoKilled(steps: AgentSteps): Promise<void> {
  const { start, send, watch, untilIdle } = steps;
  const otherProject = path.join(steps.base, 'other');
  await mkdir(otherProject);
  const doomed = (await start()).session_id!;
  const survivor = (await start(otherProject)).session_id!;

  await send(doomed, 'long task');
  await watch(doomed, (s) => lastAssistant(s).length > 0, 'the first reply');
  const [pid] = childrenIn(steps.project);
  expect(pid).toEqual(expect.any(Number));
  process.kill(pid!, 'SIGKILL');

  const closed = await watch(doomed, (s) => Boolean(s.closed), 'the session to close');
  expect(closed.status).toBe('session_closed');
  expect(closed.running).toBeFalsy();
  expect(closed.turn_timing?.finished_ms ?? null).toBeNull();

  await send(survivor, 'are you there?');
  const done = await untilIdle(survivor);
  expect(done.status).toBe('ok');
  expect(done.closed).toBeFalsy();
  expect(lastAssistant(done)).toBe('still here');
}

/**
 * A session that remembered a word survives an edge restart: resumed from the manager's seed
 * (the last state the router stored, the closed one), it continues at the next revision with its
 * thread and messages (and `expected` besides), and its next turn still knows the word (the
 * provider must be scripted with REMEMBER_SWORDFISH).
 */
export async function expectResumedAfterRestart(
  bus: AgentEdgeBus,
  steps: Pick<AgentSteps, 'start' | 'send' | 'untilIdle' | 'project'> & {
    stopEdge(): Promise<void>;
    bootEdge(): Promise<void>;
  },
  expected: Partial<EdgeAgentResult> = {},
): Promise<void> {
  const { send, untilIdle } = steps;
  const started = await steps.start();
  const id = started.session_id!;
  await send(id, 'remember the word swordfish');
  await untilIdle(id);

  await steps.stopEdge();
  const { last, seed } = bus.resumeSeed(id);
  expect(last).toMatchObject({ closed: true, status: 'session_closed' });
  await steps.bootEdge();
  const resumed = await bus.rpc(
    { action: 'resume', ...bus.on(id) },
    { resume: seed, project_root: steps.project },
  );
  expect(resumed).toMatchObject({
    status: 'ok',
    session_id: id,
    thread_id: started.thread_id,
    revision: last.revision! + 1,
    started_at: last.started_at,
    ...expected,
  });
  expect(resumed.closed || resumed.running).toBeFalsy();
  expect(resumed.messages).toEqual(last.messages);

  await send(id, 'what was the word?');
  const done = await untilIdle(id);
  expect(done.messages?.map((message) => message.text)).toEqual([
    'remember the word swordfish',
    'I will remember swordfish.',
    'what was the word?',
    'You said swordfish.',
  ]);
}

/** The options of the scripted questions the agent suites ask. */
const LEFT_OR_RIGHT = [
  { label: 'Left', description: 'the left one' },
  { label: 'Right', description: 'the right one' },
];

/** The question the agent suites script and expect: "Which one?" (header `Pick`, LEFT_OR_RIGHT). */
export const WHICH_ONE = { header: 'Pick', question: 'Which one?', options: LEFT_OR_RIGHT };

/** The two replies of the resume tests: a word to remember, then the proof it was. */
export const REMEMBER_SWORDFISH = [
  { kind: 'text', text: 'I will remember swordfish.' },
  { kind: 'text', text: 'You said swordfish.' },
] as const;

/** The script expectOneOfTwoKilled needs: a reply that hangs until its agent is killed, then one. */
export const KILLED_MID_TURN = [
  { kind: 'hang', text: 'Working on it' },
  { kind: 'text', text: 'still here' },
] as const;

/**
 * The sandbox tests' script: two turns, each a shell command writing `target` and a reply. The
 * first runs read-only (the write must fail), the second after the mode allows writes.
 */
export const writeTwice = (target: string) =>
  [
    { kind: 'shell', command: `echo blocked > ${target}` },
    { kind: 'text', text: 'tried' },
    { kind: 'shell', command: `echo allowed > ${target}` },
    { kind: 'text', text: 'wrote' },
  ] as const;

export const lastAssistant = (snapshot: EdgeAgentResult): string =>
  snapshot.messages?.filter((message) => message.role === 'assistant').at(-1)?.text ?? '';

/** A finished turn carries all three timings, in order: dispatch, first reply, finished. */
export function expectOrderedTiming(snapshot: EdgeAgentResult): void {
  const timing = snapshot.turn_timing;
  expect(timing).toEqual({
    dispatch_ms: expect.any(Number),
    first_reply_ms: expect.any(Number),
    finished_ms: expect.any(Number),
  });
  expect(timing!.dispatch_ms!).toBeLessThanOrEqual(timing!.first_reply_ms!);
  expect(timing!.first_reply_ms!).toBeLessThanOrEqual(timing!.finished_ms!);
}
