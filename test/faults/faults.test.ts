// The fault suite (issue 19): 16 clients in a closed loop of enveloped sends, watches and SSE
// streams while, in turn, each service is killed with SIGKILL and started again (api, router,
// history, edge), NATS is killed and restarted on its kept JetStream store, Redis is killed and
// restarted empty, and Postgres is stopped for 30 s. Everything the stack depends on is this
// suite's own (a nats-server, a redis-server and an initdb cluster on their own ports), never the
// shared services. For each fault it records the failed requests and whether the contract calls
// each retryable, acknowledged sends lost or stored twice, the recovery time and when history
// (Postgres) held every acknowledged send; it asserts 0 lost, 0 duplicated, every failure
// retryable and history caught up, and prints the figures (timings are never asserted).
import { appendFileSync } from 'node:fs';
import { jest } from '@jest/globals';
import { LIMITS_OFF_ENV, signToken } from '#test-support';
import type { ServiceName, Stack } from '../../scripts/stack/launcher.js';
import { LoadClient, startScriptedSessions } from '../support/closed-loop.js';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';
import { PrivateNats, PrivatePostgres, PrivateRedis } from '../support/private-servers.js';
import { expectNothingLost, FaultRun, type Fault } from './fault-run.js';

// One cold stack, seven faults (one of them 30 s of Postgres) on a shared 2-core machine.
jest.setTimeout(480_000);

const PORTS = {
  nats: Number(process.env.TETHER_FAULTS_NATS_PORT ?? 4420),
  redis: Number(process.env.TETHER_FAULTS_REDIS_PORT ?? 6420),
  postgres: Number(process.env.TETHER_FAULTS_POSTGRES_PORT ?? 5440),
};
const JWT_SECRET = 'faults-jwt-secret-0123456789';
const EDGE_SECRET = 'faults-edge-secret-0123456789';
const CLIENTS = 16;
/** An edge keeps at most 4 sessions live (Limits.EDGE_LIVE_SESSIONS_MAX): 4 clients per session. */
const SESSIONS = 4;
/** A killed process is started again after this long (as a supervisor would). */
const RESTART_DELAY_MS = 1_000;
const POSTGRES_DOWN_MS = 30_000;
const WATCH_WAIT_MS = 2_000;
/** A call a killed process had taken is abandoned after this long and resent with its id. */
const CLIENT_TIMEOUT_MS = 10_000;
const PAUSE_MS = 200;
const POLL_EVERY_MS = 300;
/** Sends answered after a fault recovered before the next fault begins. */
const SETTLE_SENDS = 4;
const WARMUP_SENDS = 8;
const BOUND_MS = 120_000;
/** History normally holds every acknowledged send within seconds of a fault. */
const CATCH_UP_BOUND_MS = 45_000;
const READY_TIMEOUT_MS = 180_000;
const LOG_FILE = process.env.TETHER_FAULTS_LOG;

const nats = new PrivateNats(PORTS.nats);
const redis = new PrivateRedis(PORTS.redis);
const postgres = new PrivatePostgres(PORTS.postgres);
let e2e: E2eStack;
let stack: Stack;
let client: LoadClient;
const owner = `faults${Date.now() % 100000}`;

beforeAll(async () => {
  await Promise.all([nats.start(), redis.start(), postgres.init()]);
  e2e = await startE2eStack({
    label: 'faults',
    jwtSecret: JWT_SECRET,
    edgeSecret: EDGE_SECRET,
    owner,
    services: { natsUrl: nats.url, redisUrl: redis.url, databaseUrl: postgres.url },
    script: { rules: [{ steps: [{ type: 'reply', text: 'kept. ', deltas: 2, delay_ms: 20 }] }] },
    stack: {
      readyTimeoutMs: READY_TIMEOUT_MS,
      // TETHER_FAULTS_LOG=<file>: every line of every service, for a failure the last lines do not explain.
      ...(LOG_FILE ? { onOutputLine: (line: string) => appendFileSync(LOG_FILE, `${line}\n`) } : {}),
      extraEnv: {
        // 16 clients of one user: the per-user limits would answer 429 by design, not a fault.
        ...LIMITS_OFF_ENV,
        TETHER_WATCH_WAIT_MS: String(WATCH_WAIT_MS),
        // A killed router's claim lapses quickly, and a resent copy waits long enough to see it.
        TETHER_OPERATION_CLAIM_MS: '3000',
        TETHER_OPERATION_WAIT_MS: '4000',
      },
    },
  });
  stack = e2e.stack;
  client = new LoadClient({
    url: () => stack.apiUrl,
    token: await signToken(JWT_SECRET, owner),
    timeoutMs: CLIENT_TIMEOUT_MS,
    // One api: while it is killed a client meets refused connections and resends the same id.
    transportRetryable: true,
    resumeLostSessions: true,
    pauseMs: PAUSE_MS,
  });
});

afterAll(async () => {
  await e2e?.close();
  await Promise.allSettled([nats.close(), redis.close(), postgres.close()]);
});

const SERVICES: ServiceName[] = ['api', 'router', 'history', 'edge'];

const READY: Partial<Record<ServiceName, () => Promise<void>>> = {
  api: () => stack.apiReady(),
  router: () => stack.routerReady(),
  history: () => stack.historyReady(),
  edge: () => stack.edgeReady(),
};

function serviceFault(name: ServiceName): Fault {
  return {
    name: `${name} (SIGKILL)`,
    down: () => stack.kill(name, 'SIGKILL'),
    downMs: RESTART_DELAY_MS,
    up: () => stack.start(name),
    ready: () => READY[name]!(),
  };
}

const FAULTS: Fault[] = [
  serviceFault('api'),
  serviceFault('router'),
  serviceFault('history'),
  serviceFault('edge'),
  {
    name: 'NATS (SIGKILL, store kept)',
    down: () => nats.stop('SIGKILL'),
    downMs: RESTART_DELAY_MS,
    up: () => nats.start(),
    ready: () => stack.routerReady(),
  },
  {
    name: 'Redis (SIGKILL, back empty)',
    down: () => redis.stop('SIGKILL'),
    downMs: RESTART_DELAY_MS,
    up: () => redis.start(),
    ready: () => Promise.resolve(),
  },
  {
    name: 'Postgres (stopped 30 s)',
    down: () => postgres.stop(),
    downMs: POSTGRES_DOWN_MS,
    up: () => postgres.start(),
    ready: () => Promise.resolve(),
  },
];

test('every service and dependency killed in turn under load: nothing acknowledged lost or doubled', async () => {
  const scripted = await startScriptedSessions(client, e2e, 'faults', SESSIONS);
  const run = new FaultRun({
    client,
    e2e,
    ...scripted,
    clients: CLIENTS,
    faults: FAULTS,
    // Each service's own last lines too: during an outage the api's warnings fill the shared tail.
    output: () => `${stack.output()}\n${SERVICES.map((name) => stack.outputOf(name)).join('')}`,
    timing: {
      boundMs: BOUND_MS,
      catchUpBoundMs: CATCH_UP_BOUND_MS,
      pauseMs: PAUSE_MS,
      pollEveryMs: POLL_EVERY_MS,
      warmupSends: WARMUP_SENDS,
      settleSends: SETTLE_SENDS,
    },
  });
  expectNothingLost(await run.run(), client, SESSIONS);
});
