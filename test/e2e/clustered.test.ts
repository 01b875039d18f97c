// Tether on a 3-node NATS cluster (issue 13): 2 api (behind a balancer that routes as a
// Kubernetes Service with readiness does), 3 router and 2 history replicas and one edge, every
// JetStream stream at 3 replicas. First the chain and the live journal as chain.test.ts and
// journal-sse.test.ts check them on one NATS server; then, under continuous load (16 clients:
// send + watch + SSE), kill -9 the sessions stream's leader node, then one api, one router and
// one history replica: no acknowledged message is lost or doubled, and every SSE stream ends
// with what a fresh read of the journal holds. Recovery and p99 are printed, never asserted.
//
// Redis: TETHER_TEST_CLUSTER_REDIS_URL when set (a Redis Cluster or Sentinel URL), else the suite's
// standalone Redis.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { jetstreamManager } from '@nats-io/jetstream';
import type { HistoryJournalPageReply, JournalItem } from '#contracts';
import { connectNats } from '#messaging';
import { freePort, signToken, testServices } from '#test-support';
import type { ServiceName, Stack } from '../../scripts/stack/launcher.js';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';
import { FaultLoad, userTexts } from '../support/fault-load.js';
import { LIMITS_OFF_ENV } from '../support/limits.js';
import { LoadBalancer } from '../support/load-balancer.js';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.js';

// Eight cold starts on a shared 2-core machine, then three more during the fault run.
jest.setTimeout(240_000);

const JWT_SECRET = 'e2e-cluster-jwt-secret-0123456789';
const EDGE_SECRET = 'e2e-cluster-edge-secret-0123456789';
const CLIENTS = 16;
/** An edge keeps at most 4 sessions live: 4 clients per session. */
const SESSIONS = 4;
const REPLICAS: ServiceName[] = ['api', 'api-2', 'router', 'router-2', 'router-3', 'history', 'history-2'];
/** The replica of each service killed under load (the api one is behind the balancer). */
const KILLED: ServiceName[] = ['api-2', 'router-2', 'history-2'];
const SHUTDOWN_DELAY_MS = 2_000;
const WATCH_WAIT_MS = 2_000;
const WARMUP_SENDS = 8;
/** After each fault has recovered, the load runs on for this long before the next one. */
const SETTLE_MS = 3_000;
const READY_TIMEOUT_MS = 150_000;
const CONVERGE_TIMEOUT_MS = 60_000;
const PAGE_LIMIT = 200;
const HISTORY_PAGES_MAX = 50;

let cluster: NatsCluster;
let e2e: E2eStack;
let stack: Stack;
let balancer: LoadBalancer;
let token: string;
const owner = `clu${Date.now() % 100000}`;
const opsPorts = new Map<ServiceName, number>();
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

const readyUrl = (name: ServiceName) => `http://127.0.0.1:${opsPorts.get(name)}/readyz`;
const isReady = async (name: ServiceName) => (await fetch(readyUrl(name))).status === 200;

beforeAll(async () => {
  cluster = await startNatsCluster();
  for (const name of REPLICAS) opsPorts.set(name, await freePort());
  const secondApiPort = await freePort();
  const ops = (name: ServiceName) => ({ TETHER_METRICS_PORT: String(opsPorts.get(name)) });
  e2e = await startE2eStack({
    label: 'e2eclu',
    jwtSecret: JWT_SECRET,
    edgeSecret: EDGE_SECRET,
    owner,
    prepareEdge: (edgeDir) => {
      const scriptPath = join(edgeDir, 'script.json');
      writeFileSync(
        scriptPath,
        JSON.stringify({
          rules: [{ steps: [{ type: 'reply', text: 'clustered. '.repeat(6), deltas: 4, delay_ms: 30 }] }],
        }),
      );
      return { TETHER_SCRIPTED_SCRIPT: scriptPath };
    },
    stack: {
      natsUrl: cluster.url,
      redisUrl: process.env.TETHER_TEST_CLUSTER_REDIS_URL ?? (await testServices()).redisUrl,
      readyTimeoutMs: READY_TIMEOUT_MS,
      secondRouter: true,
      thirdRouter: true,
      secondApi: true,
      secondHistory: true,
      extraEnv: {
        ...LIMITS_OFF_ENV,
        TETHER_JETSTREAM_REPLICAS: '3',
        TETHER_SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
        TETHER_WATCH_WAIT_MS: String(WATCH_WAIT_MS),
      },
      serviceEnv: {
        ...Object.fromEntries(REPLICAS.map((name) => [name, ops(name)])),
        'api-2': { ...ops('api-2'), TETHER_HTTP_PORT: String(secondApiPort) },
      },
    },
  });
  stack = e2e.stack;
  token = await signToken(JWT_SECRET, owner);
  for (const name of REPLICAS) await until(() => isReady(name), `${name} ready`);
  balancer = new LoadBalancer([
    { url: stack.apiUrl, readyUrl: readyUrl('api') },
    { url: `http://127.0.0.1:${secondApiPort}`, readyUrl: readyUrl('api-2') },
  ]);
  await balancer.start();
  await until(async () => balancer.readyBackends().length === 2, 'both api replicas behind the balancer');

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
  await cluster?.stop();
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

const query = () => `edge_id=${stack.edge!.id}&access_id=${accessId}`;

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

/** Every item history holds for a session, read page by page from the tail back. */
async function storedItems(sessionId: string): Promise<JournalItem[] | undefined> {
  const items = new Map<string, JournalItem>();
  let cursor: string | undefined;
  for (let page = 0; page < HISTORY_PAGES_MAX; page += 1) {
    const direction = cursor === undefined ? 'tail' : `before&cursor=${encodeURIComponent(cursor)}`;
    const reply = await e2e.owner.call<HistoryJournalPageReply>(
      'GET',
      `/api/v1/sessions/${sessionId}/history?${query()}&direction=${direction}&limit=${PAGE_LIMIT}`,
    );
    const data = reply.body.data;
    if (!data) return undefined;
    if (!data.ok) return data.snapshot.items;
    for (const item of data.page.items) items.set(item.itemId, item);
    const oldest = data.page.window.oldest;
    if (!data.page.hasOlder || !oldest) break;
    cursor = `${oldest.epoch}:${oldest.sequence}`;
  }
  return [...items.values()].sort((a, b) => a.sequence - b.sequence || a.itemId.localeCompare(b.itemId));
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

// chain.test.ts's first case: the whole path, api → router → edge → JetStream → history.
test('start → send → watch → poll, listed in sessions from history', async () => {
  const session = await startSession();
  const base = { edge_id: stack.edge!.id, access_id: accessId, session_id: session.id };
  const load = new FaultLoad({
    url: balancer.url,
    token,
    edgeId: stack.edge!.id,
    accessId,
    sessions: [],
    clients: 0,
  });
  expect((await load.call({ ...base, action: 'send', text: 'hello from the cluster' })).status).toBe('ok');
  let revision = session.revision;
  for (;;) {
    const watched = await load.call({ ...base, action: 'watch', cursor: String(revision) });
    revision = watched.revision ?? revision;
    if (!watched.running && revision > session.revision) break;
  }
  const polled = await e2e.owner.agent<{ messages: { role: string; text?: string }[] }>({
    ...base,
    action: 'poll',
  });
  expect(polled.messages[0]).toEqual(
    expect.objectContaining({ role: 'user', text: 'hello from the cluster' }),
  );
  expect(
    polled.messages.some((message) => message.role === 'assistant' && (message.text?.length ?? 0) > 0),
  ).toBe(true);
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

test('under load, kill -9 the stream leader node, an api, a router and a history: nothing lost or doubled', async () => {
  const edgeId = stack.edge!.id;
  const sessions = [];
  for (let index = 0; index < SESSIONS; index += 1) sessions.push(await startSession());
  const load = new FaultLoad({ url: balancer.url, token, edgeId, accessId, sessions, clients: CLIENTS });
  load.start();
  await until(async () => load.answered >= WARMUP_SENDS, 'the load flowing');

  const nc = await connectNats({ servers: cluster.url, name: 'test-e2e-clustered-faults' });
  const jsm = await jetstreamManager(nc);
  const leader = (await jsm.streams.info(stack.subjects.sessionsStream)).cluster?.leader ?? 'n1';
  const node = Math.max(0, cluster.indexOf(leader));
  await nc.close();

  const figures: string[] = [];
  const faultsFrom = Date.now();
  const fault = async (what: string, kill: () => Promise<void>, back?: () => Promise<void>) => {
    const before = load.answered;
    const at = Date.now();
    await kill();
    await until(
      async () => load.answered > before && load.recoveryAfter(at, 'send') !== undefined,
      `sends after ${what}`,
    );
    const backIn = back ? await back().then(() => Date.now() - at) : undefined;
    figures.push(
      `${what}: first ok request ${load.recoveryAfter(at)} ms, first ok send ${load.recoveryAfter(at, 'send')} ms` +
        (backIn === undefined ? '' : `, replica ready again ${backIn} ms`),
    );
    await sleep(SETTLE_MS);
  };
  await fault(`kill -9 NATS ${leader} (stream leader)`, () => cluster.kill(node));
  for (const name of KILLED) {
    await fault(
      `kill -9 ${name}`,
      () => stack.kill(name, 'SIGKILL'),
      async () => {
        await stack.start(name);
        await until(() => isReady(name), `${name} ready again`);
        if (name.startsWith('api')) {
          await until(async () => balancer.readyBackends().length === 2, `${name} back behind the balancer`);
        }
      },
    );
  }
  const faultsTo = Date.now();
  await cluster.restart(node);
  await load.stopLoad();

  // Every acknowledged send exactly once in history, and every client's SSE view equal to a fresh read.
  const sorted = (texts: string[]) => [...texts].sort();
  const fresh = new Map<string, JournalItem[]>();
  for (const session of load.sessions) {
    let stored: JournalItem[] = [];
    await until(
      async () => {
        stored = (await storedItems(session.id)) ?? [];
        return userTexts(stored).length >= session.sent.length;
      },
      `session ${session.id} stored in history`,
      CONVERGE_TIMEOUT_MS,
    ).catch(() => undefined);
    fresh.set(session.id, stored);
  }
  await until(
    async () =>
      load.views.every(
        (view, client) =>
          JSON.stringify(view.view()) === JSON.stringify(fresh.get(load.sessionOf(client).id)),
      ),
    'every SSE client caught up with the stored journal',
    CONVERGE_TIMEOUT_MS,
  ).catch(() => undefined);
  await load.stopStreams();

  const p99 = (action: string) => load.percentile(99, action, faultsFrom, faultsTo);
  console.log(
    `clustered faults: ${load.answered} sends acknowledged; ${figures.join('; ')}; ` +
      `during the faults p99 send attempt ${p99('send')} ms, p99 send call (retries included) ${p99('send:call')} ms, ` +
      `p99 watch ${p99('watch')} ms; retryable answers ${JSON.stringify(Object.fromEntries(load.retried))}, ` +
      `balancer ${JSON.stringify(balancer.counts)}, SSE reconnects ${load.views.map((view) => view.reconnects).join(',')}`,
  );
  expect(load.failures).toEqual([]);
  for (const session of load.sessions) {
    expect(sorted(userTexts(fresh.get(session.id)!))).toEqual(sorted(session.sent));
  }
  load.views.forEach((view, client) => {
    expect(view.view()).toEqual(fresh.get(load.sessionOf(client).id));
  });
});
