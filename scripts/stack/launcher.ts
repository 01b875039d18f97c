// Starts Tether's four services (and one edge) as child processes of this one, the way `npm run
// stack` and the e2e suites need them: against the NATS, Redis and Postgres named in the options,
// all in one subject namespace, each service restartable on its own (failure tests kill them).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NatsConnection } from '@nats-io/transport-node';
import type { NatsTlsSettings } from '#config';
import {
  inboxPrefix,
  Subjects,
  type ConnectorEnrollReply,
  type ConnectorListReply,
  type PresenceReply,
} from '#contracts';
import { connectNats, requestJson, requestService } from '#messaging';
import {
  FAKE_API_KEY_ENV,
  prepareCodexHome,
  startFakeProvider,
  type FakeProvider,
} from '../../test/support/fake-provider/index.js';
import {
  fakeAnthropicEnv,
  startFakeAnthropic,
  type FakeAnthropic,
} from '../../test/support/fake-anthropic/index.js';
import {
  fakeGeminiEnv,
  geminiEntryPoint,
  pinFakeGeminiModel,
  startFakeGemini,
  type FakeGemini,
} from '../../test/support/fake-gemini/index.js';

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
/** Lines of each service's own output kept for outputOf(). */
const TAIL_LINES = 60;
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
 * `api-2`: a second api replica (its own HTTP port through `serviceEnv`), behind a test's balancer;
 * `history-2`: a second history replica (same queue group and durable consumers).
 */
export type ServiceName =
  'history' | 'history-2' | 'router' | 'router-2' | 'router-3' | 'api' | 'api-2' | 'edge';
/** Every service replica of the clustered set-up (all the replica options on), the edge aside. */
export const CLUSTERED_REPLICAS: readonly ServiceName[] = [
  'api',
  'api-2',
  'router',
  'router-2',
  'router-3',
  'history',
  'history-2',
];
const ENTRY: Record<ServiceName, string> = {
  history: 'apps/history/src/main.js',
  'history-2': 'apps/history/src/main.js',
  router: 'apps/session-router/src/main.js',
  'router-2': 'apps/session-router/src/main.js',
  'router-3': 'apps/session-router/src/main.js',
  api: 'apps/api/src/main.js',
  'api-2': 'apps/api/src/main.js',
  edge: 'apps/edge-connector/src/main.js',
};

/** Dev and test stacks only: history written with it is readable by anyone who reads this file. */
export const DEV_HISTORY_KEY = 'tether-dev-history-key-change-me-0123456789';
/** Dev and test stacks only: the journal's content key (TETHER_JOURNAL_KEY), as public as the one above. */
export const DEV_JOURNAL_KEY = 'tether-dev-journal-key-change-me-0123456789';

export interface StackOptions {
  /** Comma-separated seed URLs of NATS. */
  natsUrl: string;
  /** A NATS `.creds` file every service (and the stack itself) connects with; absent: none. */
  natsCredsFile?: string;
  /** TLS material for NATS, passed to every service as TETHER_NATS_TLS_*. */
  natsTls?: NatsTlsSettings;
  /**
   * NATS in operator mode (docs/security.md): each service's own creds file, and history's edge
   * authority variables (TETHER_NATS_ACCOUNT...). The demo edge gets the NATS user its
   * enrollment minted; the stack itself probes with the api's identity (and the router's for
   * the edge's RPC subject). Overrides natsCredsFile.
   */
  natsIdentities?: NatsIdentities;
  redisUrl: string;
  databaseUrl: string;
  namespace: string;
  httpHost: string;
  httpPort: number;
  jwtSecret: string;
  edgeSecret: string;
  /** History's at-rest encryption secret (TETHER_HISTORY_KEY); defaults to a dev-only value. */
  historyKey?: string;
  /** The journal's content secret (TETHER_JOURNAL_KEY); defaults to a dev-only value. */
  journalKey?: string;
  demoOwner: string;
  /** `gemini` runs the edge's ACP driver (TETHER_AGENT=acp) with Gemini CLI. */
  agent: 'scripted' | 'codex' | 'claude' | 'gemini';
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
  /**
   * Claude Code only: run the project's scripted Messages-API fake in this process and point the
   * edge's Claude Code at it, so the stack needs no network and no Anthropic key.
   */
  claudeFakeProvider?: boolean;
  /**
   * Gemini only: run the project's fake Gemini API in this process and point the edge's Gemini CLI
   * at it (its private home under edgeDataDir), so the stack needs no network.
   */
  geminiFakeProvider?: boolean;
  /** The demo edge's connector name (default `demo-edge`); a second demo edge needs its own. */
  demoEdgeName?: string;
  /** Also run `router-2`, a second router replica (default: one router). */
  secondRouter?: boolean;
  /** Also run `router-3` (with `secondRouter`: three replicas). */
  thirdRouter?: boolean;
  /** Also run `api-2`; give it its own TETHER_HTTP_PORT in `serviceEnv`. */
  secondApi?: boolean;
  /** Also run `history-2`, a second history replica. */
  secondHistory?: boolean;
  /** How long a service may take to answer after it started (default READY_TIMEOUT_MS). */
  readyTimeoutMs?: number;
  /** Environment for one service only, over everything else (ports of a second replica, say). */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  /** `collect` only: every line any child writes, as written (a suite that must read them all). */
  onOutputLine?: (line: string) => void;
}

export interface NatsIdentities {
  api: string;
  router: string;
  history: string;
  edgeAuthority: Record<string, string>;
}

export interface DemoEdge {
  id: string;
  token: string;
  /** The edge's own NATS user, when history minted one. */
  credsFile?: string;
}

/** The creds file and extra variables of one service under operator mode. */
function identityEnvironment(
  identities: NatsIdentities,
  name: ServiceName,
  edge?: DemoEdge,
): Record<string, string> {
  switch (name) {
    case 'history':
    case 'history-2':
      return { TETHER_NATS_CREDS: identities.history, ...identities.edgeAuthority };
    case 'router':
    case 'router-2':
    case 'router-3':
      return { TETHER_NATS_CREDS: identities.router };
    case 'api':
    case 'api-2':
      return { TETHER_NATS_CREDS: identities.api };
    case 'edge':
      if (!edge?.credsFile) throw new Error('The demo edge has no NATS credentials.');
      return {};
  }
}

/** The NATS credential and TLS variables of the services, for the options that are set. */
function natsEnvironment(o: StackOptions): Record<string, string> {
  const entries: [string, string | undefined][] = [
    ['TETHER_NATS_CREDS', o.natsCredsFile],
    ['TETHER_NATS_TLS_CA', o.natsTls?.caFile],
    ['TETHER_NATS_TLS_CERT', o.natsTls?.certFile],
    ['TETHER_NATS_TLS_KEY', o.natsTls?.keyFile],
  ];
  return Object.fromEntries(entries.filter((entry): entry is [string, string] => Boolean(entry[1])));
}

/** Reads the NATS credential and TLS variables a launcher was given (stack, demo edge). */
export function natsOptionsFromEnv(env: NodeJS.ProcessEnv): Pick<StackOptions, 'natsCredsFile' | 'natsTls'> {
  const tls: NatsTlsSettings = {
    ...(env.TETHER_NATS_TLS_CA && { caFile: env.TETHER_NATS_TLS_CA }),
    ...(env.TETHER_NATS_TLS_CERT && { certFile: env.TETHER_NATS_TLS_CERT }),
    ...(env.TETHER_NATS_TLS_KEY && { keyFile: env.TETHER_NATS_TLS_KEY }),
  };
  return {
    ...(env.TETHER_NATS_CREDS && { natsCredsFile: env.TETHER_NATS_CREDS }),
    ...(Object.keys(tls).length > 0 && { natsTls: tls }),
  };
}

function wait(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

export class Stack {
  private readonly children = new Map<ServiceName, ChildProcess>();
  private readonly logs: string[] = [];
  private readonly tails = new Map<ServiceName, string[]>();
  private nc?: NatsConnection;
  private routerNc?: NatsConnection;
  readonly subjects: Subjects;
  edge?: DemoEdge;
  /** The scripted provider behind the edge's Codex, when `codexFakeProvider` is set. */
  fakeProvider?: FakeProvider;
  private codexEnv: Record<string, string> = {};
  /** The scripted Messages API behind the edge's Claude Code, when `claudeFakeProvider` is set. */
  claudeProvider?: FakeAnthropic;
  private claudeEnv: Record<string, string> = {};
  /** The fake Gemini API behind the edge's Gemini CLI, when `geminiFakeProvider` is set. */
  fakeGemini?: FakeGemini;

  constructor(readonly options: StackOptions) {
    this.subjects = new Subjects(options.namespace);
  }

  get apiUrl(): string {
    const host = this.options.httpHost === '0.0.0.0' ? '127.0.0.1' : this.options.httpHost;
    return `http://${host}:${this.options.httpPort}`;
  }

  private keepTail(name: ServiceName, lines: string[]): void {
    const tail = this.tails.get(name) ?? [];
    tail.push(...lines);
    if (tail.length > TAIL_LINES) tail.splice(0, tail.length - TAIL_LINES);
    this.tails.set(name, tail);
  }

  /** Recent output of every child, for a failing test to print. */
  output(): string {
    return this.logs.slice(-400).join('');
  }

  /**
   * The last lines of one service, kept apart from the others: a service that floods its log
   * (an api answering 503s while history is away) cannot push another's last words out.
   */
  outputOf(name: ServiceName): string {
    return (this.tails.get(name) ?? []).join('');
  }

  private environment(name: ServiceName): NodeJS.ProcessEnv {
    const o = this.options;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LANG: process.env.LANG,
      TETHER_NATS_URL: o.natsUrl,
      ...natsEnvironment(o),
      TETHER_NAMESPACE: o.namespace,
      TETHER_REDIS_URL: o.redisUrl,
      TETHER_DATABASE_URL: o.databaseUrl,
      TETHER_EDGE_SECRET: o.edgeSecret,
      TETHER_HISTORY_KEY: o.historyKey ?? DEV_HISTORY_KEY,
      TETHER_JOURNAL_KEY: o.journalKey ?? DEV_JOURNAL_KEY,
      TETHER_JWT_SECRET: o.jwtSecret,
      TETHER_HTTP_HOST: o.httpHost,
      TETHER_HTTP_PORT: String(o.httpPort),
      // Several stacks may share this machine (tests, benchmarks): ops endpoints take a free port
      // and log it, unless the caller names one.
      TETHER_METRICS_PORT: '0',
      ...(o.natsIdentities && identityEnvironment(o.natsIdentities, name, this.edge)),
      ...o.extraEnv,
      ...o.serviceEnv?.[name],
    };
    if (name === 'edge') {
      if (!this.edge) throw new Error('The demo edge is not enrolled yet.');
      Object.assign(env, {
        TETHER_EDGE_ID: this.edge.id,
        TETHER_EDGE_TOKEN: this.edge.token,
        TETHER_AGENT: o.agent === 'gemini' ? 'acp' : o.agent,
        TETHER_EDGE_DATA_DIR: o.edgeDataDir,
        // The edge runs on the NATS user its enrollment minted, never on the stack's own.
        ...(this.edge.credsFile && { TETHER_NATS_CREDS: this.edge.credsFile }),
        ...this.codexEnv,
        ...this.claudeEnv,
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
    if (name === 'edge' && this.options.agent === 'claude' && this.options.claudeFakeProvider) {
      await this.startClaudeFakeProvider();
    }
    if (name === 'edge' && this.options.agent === 'gemini' && this.options.geminiFakeProvider) {
      await this.startGeminiFake();
    }
    const child = spawn(process.execPath, [resolve(DIST, ENTRY[name])], {
      cwd: ROOT,
      env: this.environment(name),
      stdio: this.options.output === 'inherit' ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    const prefix = `[${name}] `;
    const collect = (chunk: Buffer) => {
      const lines = chunk.toString().split('\n').filter(Boolean);
      if (this.options.onOutputLine) for (const line of lines) this.options.onOutputLine(prefix + line);
      this.logs.push(lines.map((line) => prefix + line + '\n').join(''));
      if (this.logs.length > 2_000) this.logs.splice(0, 1_000);
      this.keepTail(
        name,
        lines.map((line) => prefix + line + '\n'),
      );
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('exit', (code, signal) => {
      if (this.children.get(name) === child) this.children.delete(name);
      this.logs.push(`${prefix}exited (code ${code}, signal ${signal})\n`);
      this.keepTail(name, [`${prefix}exited (code ${code}, signal ${signal})\n`]);
    });
    this.children.set(name, child);
    await once(child, 'spawn');
  }

  /** Starts the fake Gemini API once and pins its model in the edge's private Gemini home. */
  private async startGeminiFake(): Promise<void> {
    if (this.fakeGemini) return;
    const fake = await startFakeGemini();
    try {
      await pinFakeGeminiModel(resolve(this.options.edgeDataDir, 'agent-homes', 'gemini'));
    } catch (error) {
      await fake.stop();
      throw error;
    }
    this.fakeGemini = fake;
    Object.assign(this.codexEnv, fakeGeminiEnv(fake), { TETHER_GEMINI_PATH: geminiEntryPoint(ROOT) });
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

  /** Starts the scripted Messages API once; the edge's Claude Code gets its URL and a dummy key. */
  private async startClaudeFakeProvider(): Promise<void> {
    if (this.claudeProvider) return;
    this.claudeProvider = await startFakeAnthropic();
    this.claudeEnv = fakeAnthropicEnv(this.claudeProvider);
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

  /** The stack's own connection: the api's identity, which may call history and the router. */
  private async nats(): Promise<NatsConnection> {
    const { natsUrl, natsCredsFile, natsTls, natsIdentities } = this.options;
    this.nc ??= await connectNats({
      servers: natsUrl,
      credsFile: natsIdentities?.api ?? natsCredsFile,
      tls: natsTls,
      name: 'tether-stack',
      inboxPrefix: inboxPrefix(this.subjects, 'api'),
    });
    return this.nc;
  }

  /** Probing the edge's RPC subject takes the router's identity under operator mode. */
  private async routerNats(): Promise<NatsConnection> {
    const { natsUrl, natsTls, natsIdentities } = this.options;
    if (!natsIdentities) return this.nats();
    this.routerNc ??= await connectNats({
      servers: natsUrl,
      credsFile: natsIdentities.router,
      tls: natsTls,
      name: 'tether-stack-router',
      inboxPrefix: inboxPrefix(this.subjects, 'session-router'),
    });
    return this.routerNc;
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
    const routerNc = await this.routerNats();
    const id = this.edge?.id;
    if (!id) throw new Error('The demo edge is not enrolled yet.');
    // The edge process itself answers edge_agent_v1 (an empty request is refused, which is an
    // answer): presence alone could still be the heartbeat of an edge process that just stopped.
    await this.until('demo edge', 'edge', async () => {
      await requestJson(routerNc, this.subjects.edgeRpc(id), {}, { timeoutMs: PROBE_TIMEOUT_MS });
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
   * `demoEdgeName`) when it exists, through the same history requests the enrollment and
   * rotation endpoints use. A reused connector gets new credentials (its old ones stop working):
   * a NATS user's seed is never stored, so there is nothing else to start the edge with.
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
    const enrolled: ConnectorEnrollReply = existing
      ? await requestService(
          nc,
          this.subjects,
          'historyConnectorRotate',
          { actor_id: owner, edge_id: existing.id },
          { timeoutMs: 5_000 },
        )
      : await requestService(
          nc,
          this.subjects,
          'historyConnectorEnroll',
          { actor_id: owner, name, device: 'demo' },
          { timeoutMs: 5_000 },
        );
    this.edge = { id: enrolled.connector.id, token: enrolled.edge_token };
    if (enrolled.nats_creds) {
      mkdirSync(this.options.edgeDataDir, { recursive: true, mode: 0o700 });
      this.edge.credsFile = resolve(this.options.edgeDataDir, 'nats.creds');
      writeFileSync(this.edge.credsFile, enrolled.nats_creds, { mode: 0o600 });
    }
    return this.edge;
  }

  /** Everything, in dependency order, each one ready before the next depends on it. */
  async up(): Promise<void> {
    await this.start('history');
    if (this.options.secondHistory) await this.start('history-2');
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
    for (const name of [
      'edge',
      'api',
      'api-2',
      'router',
      'router-2',
      'router-3',
      'history',
      'history-2',
    ] as const) {
      await this.kill(name, 'SIGTERM');
    }
    await this.nc?.close();
    this.nc = undefined;
    await this.routerNc?.close();
    this.routerNc = undefined;
    await this.fakeProvider?.stop();
    this.fakeProvider = undefined;
    await this.claudeProvider?.stop();
    this.claudeProvider = undefined;
    await this.fakeGemini?.stop();
    this.fakeGemini = undefined;
  }
}
