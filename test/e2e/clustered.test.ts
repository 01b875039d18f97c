// Tether on a 3-node NATS cluster (issue 13): 2 api (behind a balancer that routes as a
// Kubernetes Service with readiness does), 3 router and 2 history replicas and one edge, every
// JetStream stream at 3 replicas: the chain as chain.test.ts checks it on one NATS server, a
// session's SSE stream on one api replica showing a turn sent through the other (the core of
// journal-sse.test.ts), and an operator's resize of the streams kept across a restart of every
// service. Why this subset: it crosses every replicated part once (the R3 journal, the Redis
// Cluster slots, the queue groups of api, router and history, history's shared durable), while
// the suites' other cases exercise logic that a cluster does not change. The fault run under
// load on the clustered set-up (NATS node, Redis master and one replica of each service killed)
// is test/faults/clustered.test.ts, on a Redis Cluster.
//
// Redis: a Redis Cluster of 3 masters and 3 replicas started here (ports 7400-7405), or
// TETHER_TEST_CLUSTER_REDIS_URL when set (a Redis Cluster or Sentinel URL of the caller's).
import { jest } from '@jest/globals';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '#messaging';
import { signToken, TEST_JWT_SECRET } from '#test-support';
import { CLUSTERED_REPLICAS, type ServiceName, type Stack } from '../../scripts/stack/launcher.js';
import { LoadClient, SseView, storedUserTexts } from '../support/closed-loop.js';
import type { E2eStack } from '../support/e2e-stack.js';
import type { LoadBalancer } from '../support/load-balancer.js';
import { startClusteredE2e, type ReplicaPorts } from '../support/replica-ports.js';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.js';
import { startRedisCluster, type RedisClusterHarness } from '../support/redis-cluster.js';

// Eight cold starts on a shared 2-core machine.
jest.setTimeout(240_000);

const REPLICAS = CLUSTERED_REPLICAS;
const SHUTDOWN_DELAY_MS = 2_000;
const WATCH_WAIT_MS = 2_000;
const READY_TIMEOUT_MS = 150_000;
const CONVERGE_TIMEOUT_MS = 60_000;

/** Six Redis nodes from here (bus ports +10000); the other suites use 7100, 7200 and 7300. */
const REDIS_BASE_PORT = 7400;

let cluster: NatsCluster;
let redis: RedisClusterHarness | undefined;
let e2e: E2eStack;
let stack: Stack;
let balancer: LoadBalancer;
const owner = `clu${Date.now() % 100000}`;
let ports: ReplicaPorts;
let accessId: string;
let installationId: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(probe: () => Promise<boolean>, what: string, boundMs = READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline)
      throw new Error(`${what} did not happen within ${boundMs} ms\n${stack.output()}`);
    await sleep(200);
  }
}

const isReady = (name: ServiceName) => ports.isReady(name);

beforeAll(async () => {
  const callerRedis = process.env.TETHER_TEST_CLUSTER_REDIS_URL;
  [cluster, redis] = await Promise.all([
    startNatsCluster(),
    callerRedis ? undefined : startRedisCluster(REDIS_BASE_PORT),
  ]);
  ({ e2e, ports } = await startClusteredE2e({
    label: 'e2eclu',
    owner,
    script: {
      rules: [{ steps: [{ type: 'reply', text: 'clustered. '.repeat(6), deltas: 4, delay_ms: 30 }] }],
    },
    natsUrl: cluster.url,
    redisUrl: callerRedis ?? redis!.url,
    readyTimeoutMs: READY_TIMEOUT_MS,
    env: {
      TETHER_SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
      TETHER_WATCH_WAIT_MS: String(WATCH_WAIT_MS),
    },
  }));
  stack = e2e.stack;
  for (const name of REPLICAS) await until(() => isReady(name), `${name} ready`);
  balancer = await ports.balancer(stack);
  await until(
    () => Promise.resolve(balancer.readyBackends().length === 2),
    'both api replicas behind the balancer',
  );

  const edgeId = stack.edge!.id;
  const discovered = await e2e.owner.agent<{ installations: { id: string; kind: string }[] }>({
    edge_id: edgeId,
    action: 'discover',
  });
  installationId = discovered.installations.find((candidate) => candidate.kind === 'scripted')!.id;
  const created = await e2e.owner.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: 'clustered',
    kind: 'scripted',
    edge_id: edgeId,
    installation_id: installationId,
    project: e2e.projectDir,
  });
  accessId = created.body.data!.id;
}, 300_000);

afterAll(async () => {
  await balancer?.stop();
  await e2e?.close();
  await Promise.allSettled([cluster?.stop(), redis?.stop()]);
});

const failed: string[] = [];
afterEach(() => {
  const state = expect.getState();
  if (state.currentTestName && state.assertionCalls !== state.numPassingAsserts)
    failed.push(state.currentTestName);
});
afterAll(() => {
  if (failed.length > 0) {
    console.log(stack?.output().split('\n').slice(-150).join('\n'));
    console.log(cluster?.output().split('\n').slice(-40).join('\n'));
  }
});

async function startSession(): Promise<{ id: string; revision: number }> {
  const started = await e2e.owner.agent<{ session_id: string; revision?: number }>({
    edge_id: stack.edge!.id,
    action: 'start',
    access_id: accessId,
    installation_id: installationId,
    project: e2e.projectDir,
  });
  return { id: started.session_id, revision: started.revision ?? 0 };
}

test('creates every stream with 3 replicas on the cluster', async () => {
  const nc = await connectNats({ servers: cluster.url, name: 'test-e2e-clustered' });
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of [stack.subjects.sessionsStream, stack.subjects.auditStream]) {
      const info = await jsm.streams.info(name);
      expect(info.config.num_replicas).toBe(3);
      expect(info.cluster?.replicas).toHaveLength(2);
    }
  } finally {
    await nc.close();
  }
});

/** One turn through the whole path: send, watch to the end, poll; returns the polled messages. */
async function runTurn(
  session: { id: string; revision: number },
  text: string,
): Promise<{ role: string; text?: string }[]> {
  const base = { edge_id: stack.edge!.id, access_id: accessId, session_id: session.id };
  const sent = await e2e.owner.agent<{ status: string }>({ ...base, action: 'send', text });
  expect(sent.status).toBe('ok');
  let revision = session.revision;
  for (;;) {
    const watched = await e2e.owner.agent<{ revision?: number; running?: boolean }>({
      ...base,
      action: 'watch',
      cursor: String(revision),
    });
    revision = watched.revision ?? revision;
    if (!watched.running && revision > session.revision) break;
  }
  session.revision = revision;
  const polled = await e2e.owner.agent<{ messages: { role: string; text?: string }[] }>({
    ...base,
    action: 'poll',
  });
  return polled.messages;
}

// chain.test.ts's first case: the whole path, api → router → edge → JetStream → history.
test('start → send → watch → poll, listed in sessions from history', async () => {
  const session = await startSession();
  const messages = await runTurn(session, 'hello from the cluster');
  expect(messages[0]).toEqual(expect.objectContaining({ role: 'user', text: 'hello from the cluster' }));
  expect(messages.some((message) => message.role === 'assistant' && (message.text?.length ?? 0) > 0)).toBe(
    true,
  );
  await until(
    async () => {
      const listed = await e2e.owner.agent<{ sessions?: { session_id: string }[] }>({
        edge_id: stack.edge!.id,
        action: 'sessions',
        access_id: accessId,
      });
      return listed.sessions?.some((listedSession) => listedSession.session_id === session.id) ?? false;
    },
    'the session listed from history',
    CONVERGE_TIMEOUT_MS,
  );
});

// journal-sse.test.ts's core on the cluster: a stream held on one api replica shows a turn sent
// through the other, read from the replicated journal, and ends equal to history's own page.
test('streams a turn sent through one api replica to an SSE client of the other, as history pages it', async () => {
  const session = await startSession();
  const follower = new LoadClient({
    url: () => ports.secondApiUrl,
    token: await signToken(TEST_JWT_SECRET, owner),
    timeoutMs: 30_000,
    transportRetryable: false,
  });
  const view = new SseView();
  const stop = new AbortController();
  const query = `edge_id=${stack.edge!.id}&access_id=${accessId}`;
  const streaming = follower.follow(`/api/v1/sessions/${session.id}/events?${query}`, view, stop.signal);
  try {
    await runTurn(session, 'seen from the other replica');
    await until(
      () =>
        Promise.resolve(
          view.userTexts().includes('seen from the other replica') &&
            [...view.items.values()].some(
              (item) =>
                item.body?.['role'] === 'assistant' && String(item.body['text']).includes('clustered.'),
            ),
        ),
      'the turn on the SSE stream of api-2',
      CONVERGE_TIMEOUT_MS,
    );
    const stored = await storedUserTexts(e2e.owner, session.id, query);
    expect(view.userTexts()).toEqual(stored);
    expect(follower.failures).toEqual([]);
  } finally {
    stop.abort();
    await streaming;
  }
});

// Issue 13: an operator's change to a stream (replicas, retention) is the stream's from then on;
// a service that starts creates a missing stream but never rewrites an existing one.
test("keeps an operator's resize of both streams across a restart of every service", async () => {
  const nc = await connectNats({ servers: cluster.url, name: 'test-e2e-clustered-resize' });
  try {
    const jsm = await jetstreamManager(nc);
    const names = [stack.subjects.sessionsStream, stack.subjects.auditStream];
    const wanted = new Map<string, { num_replicas: number; max_age: number }>();
    for (const name of names) {
      const { config } = await jsm.streams.info(name);
      // One hour more than the services' own setting, and one replica fewer.
      const resized = { num_replicas: 2, max_age: config.max_age + 3_600 * 1_000_000_000 };
      await jsm.streams.update(name, { ...config, ...resized });
      wanted.set(name, resized);
    }
    for (const name of [...REPLICAS, 'edge' as const]) {
      await stack.kill(name, 'SIGTERM');
      await stack.start(name);
      if (name === 'edge') await until(async () => (await stack.edgeReady(), true), 'the edge ready again');
      else await until(() => isReady(name), `${name} ready again`);
    }
    for (const name of names) {
      const { config } = await jsm.streams.info(name);
      expect({ num_replicas: config.num_replicas, max_age: config.max_age }).toEqual(wanted.get(name));
      // The servers act on it too: one follower left beside the leader.
      await until(
        async () => (await jsm.streams.info(name)).cluster?.replicas?.length === 1,
        `${name} down to 2 replicas`,
        CONVERGE_TIMEOUT_MS,
      );
    }
    // And the chain still runs on the resized stream.
    const messages = await runTurn(await startSession(), 'after the resize');
    expect(messages[0]).toEqual(expect.objectContaining({ role: 'user', text: 'after the resize' }));
  } finally {
    await nc.close();
  }
});
