// The fault run on the clustered set-up (issue 13): a 3-node NATS cluster with every stream at 3
// replicas, a Redis Cluster of 3 masters and 3 replicas, 2 api replicas behind a balancer that
// routes as a Kubernetes Service with readiness does, 3 router and 2 history replicas and one
// edge, all on loopback and this suite's own. Under the closed loop faults.test.ts uses (16
// clients: sends, watches and SSE streams), in turn: kill -9 the NATS node that leads the
// sessions stream (started again on its store after 1 s), kill -9 one Redis master (its replica
// takes over; the dead node stays down), then kill -9 one replica of the api, the router and
// history (each started again after 1 s). It asserts what must hold whatever the timings (every
// failure retryable, 0 acknowledged sends lost or doubled, history caught up, every SSE view
// equal to what was sent) and prints recovery times and the latency of the calls answered.
import { jest } from '@jest/globals';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '#messaging';
import { signToken, TEST_JWT_SECRET } from '#test-support';
import { CLUSTERED_REPLICAS, type ServiceName, type Stack } from '../../scripts/stack/launcher.js';
import { LoadClient, startScriptedSessions } from '../support/closed-loop.js';
import type { E2eStack } from '../support/e2e-stack.js';
import type { LoadBalancer } from '../support/load-balancer.js';
import { startClusteredE2e, type ReplicaPorts } from '../support/replica-ports.js';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.js';
import { startRedisCluster, type RedisClusterHarness } from '../support/redis-cluster.js';
import { expectNothingLost, FaultRun, type Fault } from './fault-run.js';

// Eight cold starts and five faults on a shared 2-core machine.
jest.setTimeout(600_000);

/** Six Redis nodes from here (bus ports +10000); the integration suites use 7100 and 7200. */
const REDIS_BASE_PORT = Number(process.env.TETHER_FAULTS_REDIS_CLUSTER_PORT ?? 7300);
const REPLICAS = CLUSTERED_REPLICAS;
/** One replica of each service is killed; the others keep serving. */
const KILLED: ServiceName[] = ['api-2', 'router-2', 'history-2'];
const CLIENTS = 16;
const SESSIONS = 4;
const RESTART_DELAY_MS = 1_000;
const WATCH_WAIT_MS = 2_000;
const CLIENT_TIMEOUT_MS = 10_000;
const READY_TIMEOUT_MS = 180_000;
const TIMING = {
  boundMs: 120_000,
  catchUpBoundMs: 45_000,
  pauseMs: 200,
  pollEveryMs: 300,
  warmupSends: 8,
  settleSends: 4,
};

let nats: NatsCluster;
let redis: RedisClusterHarness;
let e2e: E2eStack;
let stack: Stack;
let balancer: LoadBalancer;
let client: LoadClient;
const owner = `fclu${Date.now() % 100000}`;
let ports: ReplicaPorts;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function untilReady(names: readonly ServiceName[], boundMs = READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const ready = await Promise.all(names.map((name) => ports.isReady(name)));
    if (ready.every(Boolean)) return;
    if (Date.now() > deadline) throw new Error(`${names.join(', ')} not ready\n${stack.output()}`);
    await sleep(200);
  }
}

beforeAll(async () => {
  [nats, redis] = await Promise.all([startNatsCluster(), startRedisCluster(REDIS_BASE_PORT)]);
  ({ e2e, ports } = await startClusteredE2e({
    label: 'faultsclu',
    owner,
    script: { rules: [{ steps: [{ type: 'reply', text: 'kept. ', deltas: 2, delay_ms: 20 }] }] },
    natsUrl: nats.url,
    redisUrl: redis.url,
    readyTimeoutMs: READY_TIMEOUT_MS,
    env: {
      TETHER_WATCH_WAIT_MS: String(WATCH_WAIT_MS),
      // A killed router's claim lapses quickly, and a resent copy waits long enough to see it.
      TETHER_OPERATION_CLAIM_MS: '3000',
      TETHER_OPERATION_WAIT_MS: '4000',
    },
  }));
  stack = e2e.stack;
  await untilReady(REPLICAS);
  balancer = await ports.balancer(stack);
  client = new LoadClient({
    url: () => balancer.url,
    token: await signToken(TEST_JWT_SECRET, owner),
    timeoutMs: CLIENT_TIMEOUT_MS,
    // A killed api replica drops the requests it had in hand (the balancer's 502, or a dropped
    // response): every one carries its operation id, so the client sends it again.
    transportRetryable: true,
    pauseMs: TIMING.pauseMs,
  });
}, READY_TIMEOUT_MS * 2);

afterAll(async () => {
  await balancer?.stop();
  await e2e?.close();
  await Promise.allSettled([nats?.stop(), redis?.stop()]);
});

/** The node that leads the sessions stream now: losing it forces an election. */
async function streamLeader(): Promise<number> {
  const nc = await connectNats({ servers: nats.url, name: 'test-faults-clustered' });
  try {
    const info = await (await jetstreamManager(nc)).streams.info(stack.subjects.sessionsStream);
    return Math.max(0, nats.indexOf(info.cluster?.leader ?? ''));
  } finally {
    await nc.close();
  }
}

function replicaFault(name: ServiceName): Fault {
  return {
    name: `${name} (SIGKILL)`,
    down: () => stack.kill(name, 'SIGKILL'),
    downMs: RESTART_DELAY_MS,
    up: () => stack.start(name),
    ready: async () => {
      await untilReady([name]);
      if (!name.startsWith('api')) return;
      while (balancer.readyBackends().length < 2) await sleep(100);
    },
  };
}

test('kill -9 the stream leader node, a Redis master and one replica of each service under load: nothing lost or doubled', async () => {
  const scripted = await startScriptedSessions(client, e2e, 'faults-clustered', SESSIONS);

  let leader = 0;
  const faults: Fault[] = [
    {
      name: 'NATS stream leader node (SIGKILL, store kept)',
      down: async () => {
        leader = await streamLeader();
        await nats.kill(leader);
      },
      downMs: RESTART_DELAY_MS,
      up: () => nats.restart(leader),
      ready: () => Promise.resolve(),
    },
    {
      name: 'Redis master (SIGKILL, replica takes over)',
      down: async () => void (await redis.killMaster()),
      downMs: 0,
      up: () => redis.waitForFailover(),
      ready: () => Promise.resolve(),
    },
    ...KILLED.map(replicaFault),
  ];
  const run = new FaultRun({
    client,
    e2e,
    ...scripted,
    clients: CLIENTS,
    faults,
    // Each service's own last lines too: during an outage one service's warnings fill the shared tail.
    output: () =>
      `${stack.output()}\n${[...REPLICAS, 'edge' as const].map((name) => stack.outputOf(name)).join('')}\n${nats.output()}`,
    timing: TIMING,
  });
  const result = await run.run();
  console.log(`balancer: ${JSON.stringify(balancer.counts)}`);
  // Eight services, three NATS nodes and six Redis nodes share two cores here, and the load runs
  // as fast as the api answers: history falls behind and catches up after the load (its lag per
  // fault is reported as "history caught up"; docs/scaling.md).
  expectNothingLost(result, client, SESSIONS, false);
});
