// Starts Tether's four services (and one edge) as child processes of this one, the way `npm run
// stack` and the e2e suites need them: against the NATS, Redis and Postgres named in the options,
// all in one subject namespace, each service restartable on its own (failure tests kill them).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  edgeToken,
  Subjects,
  type ConnectorEnrollReply,
  type ConnectorListReply,
  type PresenceReply,
} from '#contracts';
import { requestJson, requestService } from '#messaging';
import {
  FAKE_API_KEY_ENV,
  prepareCodexHome,
  startFakeProvider,
  type FakeProvider,
} from '../../test/support/fake-provider/index.js';

/** The repository root: the nearest folder above this file with a package-lock.json. */
function findRoot(from: string): string {
  let dir = from;
  while (!existsSync(resolve(dir, 'package-lock.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`No repository root above ${from}.`);
    dir = parent;
  }
  return dir;
}
const ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));
/** Services run from the compiled tree; `npm run build` makes it. */
const DIST = resolve(ROOT, 'dist');
/**
 * How long a service may take to answer after its process started. Generous: on a loaded 2-core
 * CI box a cold start (module loading, Prisma's first query) has been seen to take over 20 s.
 */
const READY_TIMEOUT_MS = 60_000;
/** One readiness probe; a slow first answer is still an answer. */
const PROBE_TIMEOUT_MS = 3_000;
const POLL_MS = 100;

/**
 * `router-2`, `router-3`: more router replicas (same queue group), for failover and rollout tests;
 * `api-2`: a second api replica (its own HTTP port through `serviceEnv`), behind a test's balancer.
 */
export type ServiceName = 'history' | 'router' | 'router-2' | 'router-3' | 'api' | 'api-2' | 'edge';
const ENTRY: Record<ServiceName, string> = {
  history: 'apps/history/src/main.js',
  router: 'apps/session-router/src/main.js',
  'router-2': 'apps/session-router/src/main.js',
  'router-3': 'apps/session-router/src/main.js',
  api: 'apps/api/src/main.js',
  'api-2': 'apps/api/src/main.js',
  edge: 'apps/edge-connector/src/main.js',
};

/** Dev and test stacks only: history written with it is readable by anyone who reads this file. */
export const DEV_HISTORY_KEY = 'tether-dev-history-key-change-me-0123456789';

export interface StackOptions {
  natsUrl: string;
  redisUrl: string;
  databaseUrl: string;
  namespace: string;
  httpHost: string;
  httpPort: number;
  jwtSecret: string;
  edgeSecret: string;
  /** History's at-rest encryption secret (TETHER_HISTORY_KEY); defaults to a dev-only value. */
  historyKey?: string;
  demoOwner: string;
  agent: 'scripted' | 'codex';
  /** Where the edge keeps its bindings. */
  edgeDataDir: string;
  /** Extra environment for every service (e.g. OTEL_*, TETHER_SCRIPTED_SCRIPT). */
  extraEnv?: Record<string, string>;
  /** Extra environment for the edge only (e.g. the Codex provider). */
  edgeEnv?: Record<string, string>;
  /** Child output: inherit (stack), or collect (tests print it when they fail). */
  output: 'inherit' | 'collect';
  /**
   * Codex only: run the project's scripted Responses-API provider in this process and point the
   * edge's Codex at it (its own CODEX_HOME under edgeDataDir), so the stack needs no network.
   */
  codexFakeProvider?: boolean;
  /** The demo edge's connector name (default `demo-edge`); a second demo edge needs its own. */
  demoEdgeName?: string;
  /** Also run `router-2`, a second router replica (default: one router). */
  secondRouter?: boolean;
  /** Also run `router-3` (with `secondRouter`: three replicas). */
  thirdRouter?: boolean;
  /** Also run `api-2`; give it its own TETHER_HTTP_PORT in `serviceEnv`. */
  secondApi?: boolean;
  /** How long a service may take to answer after it started (default READY_TIMEOUT_MS). */
  readyTimeoutMs?: number;
  /** Environment for one service only, over everything else (ports of a second replica, say). */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
}

export interface DemoEdge {
  id: string;
  token: string;
}

function wait(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

export class Stack {
  private readonly children = new Map<ServiceName, ChildProcess>();
  private readonly logs: string[] = [];
  private nc?: NatsConnection;
  readonly subjects: Subjects;
  edge?: DemoEdge;
  /** The scripted provider behind the edge's Codex, when `codexFakeProvider` is set. */
  fakeProvider?: FakeProvider;
  private codexEnv: Record<string, string> = {};

  constructor(readonly options: StackOptions) {
    this.subjects = new Subjects(options.namespace);
  }

  get apiUrl(): string {
    const host = this.options.httpHost === '0.0.0.0' ? '127.0.0.1' : this.options.httpHost;
    return `http://${host}:${this.options.httpPort}`;
  }

  /** Recent output of every child, for a failing test to print. */
  output(): string {
    return this.logs.slice(-400).join('');
  }

  private environment(name: ServiceName): NodeJS.ProcessEnv {
    const o = this.options;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LANG: process.env.LANG,
      TETHER_NATS_URL: o.natsUrl,
      TETHER_NAMESPACE: o.namespace,
      TETHER_REDIS_URL: o.redisUrl,
      TETHER_DATABASE_URL: o.databaseUrl,
      TETHER_EDGE_SECRET: o.edgeSecret,
      TETHER_HISTORY_KEY: o.historyKey ?? DEV_HISTORY_KEY,
      TETHER_JWT_SECRET: o.jwtSecret,
      TETHER_HTTP_HOST: o.httpHost,
      TETHER_HTTP_PORT: String(o.httpPort),
      // Several stacks may share this machine (tests, benchmarks): ops endpoints take a free port
      // and log it, unless the caller names one.
      TETHER_METRICS_PORT: '0',
      ...o.extraEnv,
      ...o.serviceEnv?.[name],
    };
    if (name === 'edge') {
      if (!this.edge) throw new Error('The demo edge is not enrolled yet.');
      Object.assign(env, {
        TETHER_EDGE_ID: this.edge.id,
        TETHER_EDGE_TOKEN: this.edge.token,
        TETHER_AGENT: o.agent,
        TETHER_EDGE_DATA_DIR: o.edgeDataDir,
        ...this.codexEnv,
        ...o.edgeEnv,
      });
    }
    return env;
  }

  /** Starts one service; resolves once its process is spawned (readiness is checked separately). */
  async start(name: ServiceName): Promise<void> {
    if (this.children.has(name)) throw new Error(`${name} is already running.`);
    if (name === 'edge' && this.options.agent === 'codex' && this.options.codexFakeProvider) {
      await this.startCodexFakeProvider();
    }
    const child = spawn(process.execPath, [resolve(DIST, ENTRY[name])], {
      cwd: ROOT,
      env: this.environment(name),
      stdio: this.options.output === 'inherit' ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    const prefix = `[${name}] `;
    const collect = (chunk: Buffer) => {
      this.logs.push(
        chunk
          .toString()
          .split('\n')
          .filter(Boolean)
          .map((line) => prefix + line + '\n')
          .join(''),
      );
      if (this.logs.length > 2_000) this.logs.splice(0, 1_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('exit', (code, signal) => {
      if (this.children.get(name) === child) this.children.delete(name);
      this.logs.push(`${prefix}exited (code ${code}, signal ${signal})\n`);
    });
    this.children.set(name, child);
    await once(child, 'spawn');
  }

  /** Starts the scripted provider once and writes the CODEX_HOME that points Codex at it. */
  private async startCodexFakeProvider(): Promise<void> {
    if (this.fakeProvider) return;
    const provider = await startFakeProvider();
    const codexHome = resolve(this.options.edgeDataDir, 'codex-home');
    try {
      await prepareCodexHome(codexHome, provider);
    } catch (error) {
      await provider.stop();
      throw error;
    }
    this.fakeProvider = provider;
    const proxy = `http://127.0.0.1:${provider.port}`;
    this.codexEnv = {
      TETHER_CODEX_HOME: codexHome,
      TETHER_CODEX_ENV_ALLOW: FAKE_API_KEY_ENV,
      [FAKE_API_KEY_ENV]: 'fake-provider-key',
      // Anything else Codex tries to reach lands on the fake, which refuses it.
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      NO_PROXY: '127.0.0.1,localhost',
    };
  }

  /** Sends a signal and waits for the process to exit. */
  async kill(name: ServiceName, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await this.stop(name, signal);
  }

  /** Sends a signal and resolves with the exit code once the process exited (null: not running or killed). */
  async stop(name: ServiceName, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const child = this.children.get(name);
    if (!child) return null;
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    child.kill(signal);
    const [code] = await exited;
    return code;
  }

  /** The process id of a running service (benchmarks read its memory and CPU from /proc). */
  pid(name: ServiceName): number | undefined {
    return this.children.get(name)?.pid;
  }

  running(name: ServiceName): boolean {
    return this.children.has(name);
  }

  private async nats(): Promise<NatsConnection> {
    this.nc ??= await connect({ servers: this.options.natsUrl.split(','), name: 'tether-stack' });
    return this.nc;
  }

  private async until<T>(
    what: string,
    service: ServiceName,
    probe: () => Promise<T | undefined>,
  ): Promise<T> {
    const bound = this.options.readyTimeoutMs ?? READY_TIMEOUT_MS;
    const deadline = Date.now() + bound;
    let lastError: unknown;
    while (Date.now() < deadline) {
      // A service that exited (bad configuration, say) will not become ready: say so at once.
      if (!this.running(service)) throw new Error(`${what} exited before it was ready.\n${this.output()}`);
      try {
        const value = await probe();
        if (value !== undefined) return value;
      } catch (error) {
        lastError = error;
      }
      await wait(POLL_MS);
    }
    throw new Error(`${what} was not ready after ${bound} ms (${String(lastError)}).\n${this.output()}`);
  }

  /** History answers requests. */
  async historyReady(): Promise<void> {
    const nc = await this.nats();
    await this.until('history', 'history', async () =>
      requestService(
        nc,
        this.subjects,
        'historyConnectorList',
        { actor_id: this.options.demoOwner },
        {
          timeoutMs: PROBE_TIMEOUT_MS,
        },
      ),
    );
  }

  /** The router answers requests. */
  async routerReady(): Promise<void> {
    const nc = await this.nats();
    await this.until('session router', 'router', async () =>
      requestService(nc, this.subjects, 'routerPresence', { edge_ids: [] }, { timeoutMs: PROBE_TIMEOUT_MS }),
    );
  }

  /** The api answers HTTP (401 without a token is an answer). */
  async apiReady(): Promise<void> {
    await this.until('api', 'api', async () => {
      const response = await fetch(`${this.apiUrl}/api/v1/edge-agents/connectors`);
      return response.status === 401 ? true : undefined;
    });
  }

  /** The demo edge serves requests and is online (its heartbeat reached a router). */
  async edgeReady(): Promise<void> {
    const nc = await this.nats();
    const id = this.edge?.id;
    if (!id) throw new Error('The demo edge is not enrolled yet.');
    // The edge process itself answers edge_agent_v1 (an empty request is refused, which is an
    // answer): presence alone could still be the heartbeat of an edge process that just stopped.
    await this.until('demo edge', 'edge', async () => {
      await requestJson(nc, this.subjects.edgeRpc(id), {}, { timeoutMs: PROBE_TIMEOUT_MS });
      return true;
    });
    await this.until('demo edge presence', 'edge', async () => {
      const reply: PresenceReply = await requestService(
        nc,
        this.subjects,
        'routerPresence',
        { edge_ids: [id] },
        {
          timeoutMs: PROBE_TIMEOUT_MS,
        },
      );
      return reply.online.includes(id) ? true : undefined;
    });
  }

  /**
   * Enrolls the demo edge for the demo owner, reusing the connector named `demo-edge` (or
   * `demoEdgeName`) when it exists, through the same history request the enrollment endpoint uses.
   */
  async enrollDemoEdge(): Promise<DemoEdge> {
    const nc = await this.nats();
    const owner = this.options.demoOwner;
    const listed: ConnectorListReply = await requestService(
      nc,
      this.subjects,
      'historyConnectorList',
      {
        actor_id: owner,
      },
      { timeoutMs: 5_000 },
    );
    const name = this.options.demoEdgeName ?? 'demo-edge';
    const existing = listed.connectors.find((connector) => connector.name === name);
    if (existing) {
      this.edge = { id: existing.id, token: edgeToken(this.options.edgeSecret, existing.id) };
      return this.edge;
    }
    const enrolled: ConnectorEnrollReply = await requestService(
      nc,
      this.subjects,
      'historyConnectorEnroll',
      {
        actor_id: owner,
        name,
        device: 'demo',
      },
      { timeoutMs: 5_000 },
    );
    this.edge = { id: enrolled.connector.id, token: enrolled.edge_token };
    return this.edge;
  }

  /** Everything, in dependency order, each one ready before the next depends on it. */
  async up(): Promise<void> {
    await this.start('history');
    await this.start('router');
    if (this.options.secondRouter) await this.start('router-2');
    if (this.options.thirdRouter) await this.start('router-3');
    await this.start('api');
    if (this.options.secondApi) await this.start('api-2');
    await this.historyReady();
    await this.enrollDemoEdge();
    await this.start('edge');
    await Promise.all([this.routerReady(), this.apiReady()]);
    await this.edgeReady();
  }

  /**
   * Stops everything in reverse dependency order: the edge first, so its last session updates
   * still reach a router and history, then the api, the router, and history last.
   */
  async down(): Promise<void> {
    for (const name of ['edge', 'api', 'api-2', 'router', 'router-2', 'router-3', 'history'] as const) {
      await this.kill(name, 'SIGTERM');
    }
    await this.nc?.close();
    this.nc = undefined;
    await this.fakeProvider?.stop();
    this.fakeProvider = undefined;
  }
}
