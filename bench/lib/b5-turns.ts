// What the B5 benches (bench/codex.ts for Codex and Claude Code, bench/gemini.ts) measure alike: a
// direct turn's dispatch and first reply, timed from the agent driver's events, and the Tether
// side's stack with the demo edge on the agent and an access to its installation.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import { createTestDatabase, freePort, uniqueNamespace, type TestDatabase } from '#test-support';
import type { AgentEvent, AgentSession } from '../../apps/edge-connector/src/agent/agent-driver.js';
import { Stack, type StackOptions } from '../../scripts/stack/launcher.js';
import type { Client } from '../codex.js';
import { benchServices } from './env.js';
import { BENCH_EDGE_SECRET, BENCH_JWT_SECRET } from './tether.js';

// The method every B5 agent is measured by alike, so its rows compare across agents.
/** What every turn (either side) sends. */
export const PROMPT = 'Say the benchmark line.';
/** Turns per side run first and left out of the figures. */
export const WARMUP_TURNS = 2;
/** Every turn (either side) must finish within this. */
export const TURN_TIMEOUT_MS = 30_000;
/** Quiet time between turns, so one side's background work (journal writes) lands less on the other. */
export const SETTLE_MS = 250;
/** The most Tether may add to a turn's dispatch and first reply (p50). */
export const TARGET_ADDED_P50_MS = 5;

export interface DirectSample {
  dispatch: number;
  firstReply: number;
}

/**
 * Times direct turns from a driver session's events: feed it every event (`onEvent`), and `time`
 * a turn's start. Dispatch is the start resolving; first reply the first non-empty
 * `message_delta`; both from the instant before the start.
 */
export class TurnClock {
  private firstDeltaAt: number | undefined;
  private completed: (() => void) | undefined;

  onEvent(event: AgentEvent): void {
    if (event.type === 'message_delta' && event.text !== '') this.firstDeltaAt ??= performance.now();
    if (event.type === 'turn_completed') this.completed?.();
  }

  /** Starts a PROMPT turn of `session` and waits (at most TURN_TIMEOUT_MS) for it to complete. */
  async time(session: Pick<AgentSession, 'startTurn'>): Promise<DirectSample> {
    this.firstDeltaAt = undefined;
    let timer: NodeJS.Timeout | undefined;
    const finished = new Promise<void>((done, fail) => {
      this.completed = done;
      timer = setTimeout(() => fail(new Error('A direct turn did not finish in time.')), TURN_TIMEOUT_MS);
    });
    const started = performance.now();
    try {
      await session.startTurn({ text: PROMPT, permissionMode: 'read-only' });
      const dispatch = performance.now() - started;
      await finished;
      if (this.firstDeltaAt === undefined) throw new Error('A direct turn finished without a reply.');
      return { dispatch, firstReply: this.firstDeltaAt - started };
    } finally {
      clearTimeout(timer);
      this.completed = undefined;
    }
  }
}

/** The options of a B5 stack that differ per agent (which one, its fake, ...). */
export type AgentStackOptions = Omit<
  StackOptions,
  | 'natsUrl'
  | 'redisUrl'
  | 'databaseUrl'
  | 'namespace'
  | 'httpHost'
  | 'httpPort'
  | 'jwtSecret'
  | 'edgeSecret'
  | 'demoOwner'
  | 'edgeDataDir'
  | 'output'
  | 'extraEnv'
>;

/**
 * Starts the Tether side in `dir`: a fresh database named `label`, the stack on the shared NATS and
 * Redis with the demo edge owned by `owner`, and the project folder its sessions use.
 */
export async function startAgentStack(
  dir: string,
  label: string,
  owner: string,
  serviceEnv: Record<string, string>,
  agentOptions: AgentStackOptions,
): Promise<{ stack: Stack; database: TestDatabase; project: string }> {
  const services = benchServices();
  const database = await createTestDatabase(label);
  const project = join(dir, 'tether-project');
  mkdirSync(project, { recursive: true });
  const stack = new Stack({
    natsUrl: services.natsUrl,
    redisUrl: services.redisUrl,
    databaseUrl: database.url,
    namespace: uniqueNamespace(label),
    httpHost: '127.0.0.1',
    httpPort: await freePort(),
    jwtSecret: BENCH_JWT_SECRET,
    edgeSecret: BENCH_EDGE_SECRET,
    demoOwner: owner,
    edgeDataDir: join(dir, 'edge'),
    output: 'collect',
    extraEnv: serviceEnv,
    ...agentOptions,
  });
  await stack.up();
  return { stack, database, project };
}

/** Stops what startAgentStack started and removes the run's state, database included. */
export async function stopAgentStack(
  stack: Stack | undefined,
  database: TestDatabase | undefined,
): Promise<void> {
  if (stack) {
    await stack.down();
    await removeState(stack);
  }
  await database?.drop();
}

/** Deletes the run's stream and Redis keys (everything is prefixed with its namespace). */
async function removeState(stack: Stack): Promise<void> {
  const nc = await connect({ servers: stack.options.natsUrl.split(',') });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(stack.subjects.sessionsStream).catch(() => false);
  } finally {
    await nc.close();
  }
  const redis = new Redis(stack.options.redisUrl, { lazyConnect: true });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${stack.subjects.namespace}:*`, 'COUNT', 1000);
      if (keys.length) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** The edge's installation of `kind` (`label` names it in errors) and a new access to it in `project`. */
export async function createAgentAccess(
  client: Client,
  edgeId: string,
  agent: { kind: string; label: string },
  project: string,
): Promise<{ installation: string; access: string }> {
  const discovered = await client.agentAction({ edge_id: edgeId, action: 'discover' });
  const installation = discovered.installations?.find((entry) => entry.kind === agent.kind);
  if (!installation) throw new Error(`The edge discovered no ${agent.label} installation.`);
  const access = await client.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: `bench ${agent.kind}`,
    kind: agent.kind,
    edge_id: edgeId,
    installation_id: installation.id,
    project,
  });
  return { installation: installation.id, access: access.id };
}
