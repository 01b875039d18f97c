// A rolling restart under load (issue 12, "Done when"): two api replicas behind a local balancer
// that routes as a Kubernetes Service with readiness does, three routers, and 16 clients in a
// closed loop of send + watch + SSE for the whole run. Every api and router replica is stopped
// with SIGTERM and started again, one after another. The run ends with 0 failed client requests,
// and every session's journal (as history pages it, and as each client's SSE stream saw it)
// holds each acknowledged send exactly once: nothing lost, nothing duplicated. A send that meets
// a stopping replica completes or is refused with a retryable status; the client resends it with
// the same operation id (docs/contract.md "Idempotent mutations"), never making a second message.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { freePort, signToken } from '#test-support';
import {
  operationFingerprint,
  type EdgeAgentRequest,
  type JournalItem,
  type JournalSnapshot,
} from '#contracts';
import type { ServiceName, Stack } from '../../scripts/stack/launcher.js';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';
import { LIMITS_OFF_ENV } from '../support/limits.js';
import { LoadBalancer } from '../support/load-balancer.js';

// Seven cold starts (five of them during the run) on a shared 2-core machine: minutes, not seconds.
jest.setTimeout(600_000);

const JWT_SECRET = 'e2e-jwt-secret-0123456789';
const EDGE_SECRET = 'e2e-edge-secret-0123456789';
const CLIENTS = 16;
/** An edge keeps at most 4 sessions live (Limits.EDGE_LIVE_SESSIONS_MAX): 4 clients per session. */
const SESSIONS = 4;
const ROLLOUT: ServiceName[] = ['api', 'api-2', 'router', 'router-2', 'router-3'];
/**
 * The replicas keep serving this long after SIGTERM with /readyz at 503 (the manifests use 5 s
 * against a 2 × 2 s probe). Two failed 100 ms probes need far less, but this process also runs 16
 * clients and its event loop lags on a loaded 2-core machine: 1 s once let a watch reach an api
 * that had already stopped listening.
 */
const SHUTDOWN_DELAY_MS = 2_000;
const WATCH_WAIT_MS = 2_000;
/** Sends answered before the first restart, so the load is flowing when it begins. */
const WARMUP_SENDS = 8;
/** After each replica is back, the load runs on it for a while before the next one stops. */
const SETTLE_MS = 1_500;
/** A client call that takes longer than this failed (the api's own timeouts are shorter). */
const CLIENT_TIMEOUT_MS = 45_000;
const RETRY_PAUSE_MS = 200;
const CALL_ATTEMPTS_MAX = 100;
const CONVERGE_TIMEOUT_MS = 45_000;
/** A cold start on a loaded 2-core machine has been seen to take well over a minute. */
const READY_TIMEOUT_MS = 180_000;

interface Snapshot {
  status: string;
  session_id?: string;
  revision?: number;
  running?: boolean;
  installations?: { id: string; kind: string }[];
  operation?: {
    replayed?: boolean;
    refusal?: { code: string };
    submission?: { dispatch_state?: string };
  };
}

let e2e: E2eStack;
let stack: Stack;
let balancer: LoadBalancer;
let token: string;
const owner = `roll${Date.now() % 100000}`;
const opsPorts = new Map<ServiceName, number>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(probe: () => Promise<boolean>, what: string, boundMs = READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline)
      throw new Error(`${what} did not happen within ${boundMs} ms\n${stack.output()}`);
    await sleep(RETRY_PAUSE_MS);
  }
}

const readyUrl = (name: ServiceName) => `http://127.0.0.1:${opsPorts.get(name)}/readyz`;
const isReady = async (name: ServiceName) => (await fetch(readyUrl(name))).status === 200;

beforeAll(async () => {
  for (const name of ROLLOUT) opsPorts.set(name, await freePort());
  const secondApiPort = await freePort();
  const ops = (name: ServiceName) => ({ TETHER_METRICS_PORT: String(opsPorts.get(name)) });
  e2e = await startE2eStack({
    label: 'e2eroll',
    jwtSecret: JWT_SECRET,
    edgeSecret: EDGE_SECRET,
    owner,
    // A short streamed reply: every turn writes a few journal rows the SSE streams must carry.
    prepareEdge: (edgeDir) => {
      const scriptPath = join(edgeDir, 'script.json');
      writeFileSync(
        scriptPath,
        JSON.stringify({
          rules: [{ steps: [{ type: 'reply', text: 'rolled. '.repeat(4), deltas: 3, delay_ms: 30 }] }],
        }),
      );
      return { TETHER_SCRIPTED_SCRIPT: scriptPath };
    },
    stack: {
      readyTimeoutMs: READY_TIMEOUT_MS,
      secondRouter: true,
      thirdRouter: true,
      secondApi: true,
      extraEnv: {
        // 16 clients of one user, all on one api while the other restarts: the per-user limits
        // would answer 429 by design (they have their own suites), not what this run measures.
        ...LIMITS_OFF_ENV,
        TETHER_SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
        TETHER_WATCH_WAIT_MS: String(WATCH_WAIT_MS),
      },
      serviceEnv: {
        api: ops('api'),
        'api-2': { ...ops('api-2'), TETHER_HTTP_PORT: String(secondApiPort) },
        router: ops('router'),
        'router-2': ops('router-2'),
        'router-3': ops('router-3'),
      },
    },
  });
  stack = e2e.stack;
  token = await signToken(JWT_SECRET, owner);
  for (const name of ROLLOUT) await until(() => isReady(name), `${name} ready`);
  balancer = new LoadBalancer([
    { url: stack.apiUrl, readyUrl: readyUrl('api') },
    { url: `http://127.0.0.1:${secondApiPort}`, readyUrl: readyUrl('api-2') },
  ]);
  await balancer.start();
  await until(async () => balancer.readyBackends().length === 2, 'both api replicas behind the balancer');
});

afterAll(async () => {
  await balancer?.stop();
  await e2e?.close();
});

/** What went wrong for clients: must stay empty. */
const failures: string[] = [];
/** Retryable answers (a stopping replica's refusal) the clients resent with the same id. */
const retried = new Map<string, number>();
const noteRetry = (why: string) => retried.set(why, (retried.get(why) ?? 0) + 1);

async function post(request: Record<string, unknown>): Promise<{ status: number; data?: Snapshot }> {
  const response = await fetch(`${balancer.url}/api/v1/edge-agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(request),
    signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
  });
  const text = await response.text();
  return { status: response.status, data: (JSON.parse(text) as { data?: Snapshot }).data };
}

/**
 * One client call through the balancer. A transport error, a non-JSON answer or an undocumented
 * status is a failure. A 503, `unavailable` without an operation (no router answered), a copy
 * still running, or an `unknown` settlement (then resent with `retry_unknown`) is retryable.
 */
async function call(request: Record<string, unknown>): Promise<Snapshot> {
  let current = request;
  for (let attempt = 0; attempt < CALL_ATTEMPTS_MAX; attempt += 1) {
    let reply: { status: number; data?: Snapshot };
    try {
      reply = await post(current);
    } catch (error) {
      failures.push(`${String(request.action)}: ${(error as Error).message}`);
      await sleep(RETRY_PAUSE_MS);
      continue;
    }
    const data = reply.data;
    if (reply.status === 503) noteRetry('http 503');
    else if (reply.status !== 200 || !data) failures.push(`${String(request.action)}: HTTP ${reply.status}`);
    else if (data.status === 'unavailable' && !data.operation) noteRetry('unavailable');
    else if (data.operation?.refusal?.code === 'agent_session_operation_unknown')
      noteRetry('operation running');
    else if (data.operation?.submission?.dispatch_state === 'unknown') {
      noteRetry('dispatch unknown');
      current = { ...request, retry_unknown: true };
    } else if (data.status === 'ok') return data;
    else failures.push(`${String(request.action)}: status ${data.status}`);
    await sleep(RETRY_PAUSE_MS);
  }
  throw new Error(`${String(request.action)} was never answered ok`);
}

/** Watches until the turn after `from` finished. */
async function waitIdle(base: Record<string, string>, from: number): Promise<number> {
  let cursor = from;
  const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const watched = await call({ ...base, action: 'watch', cursor: String(cursor) });
    cursor = watched.revision ?? cursor;
    if (!watched.running && cursor > from) return cursor;
  }
  throw new Error(`session ${base.session_id} did not finish its turn after revision ${from}`);
}

/** A client's view of its session's journal, from the SSE events it applied. */
class SseView {
  items = new Map<string, JournalItem>();
  lastEventId: string | undefined;
  reconnects = 0;

  apply(type: string, id: string | undefined, data: string): void {
    const event = JSON.parse(data) as { snapshot?: JournalSnapshot; batch?: { items: JournalItem[] } };
    if ((type === 'snapshot' || type === 'reset') && event.snapshot) {
      this.items = new Map(event.snapshot.items.map((item) => [item.itemId, item]));
    } else if (type === 'batch' && event.batch) {
      for (const item of event.batch.items) {
        const held = this.items.get(item.itemId);
        if (!held || held.revision <= item.revision) this.items.set(item.itemId, item);
      }
    }
    if (id !== undefined) this.lastEventId = id;
  }

  userTexts(): string[] {
    return userTexts([...this.items.values()]);
  }
}

function userTexts(items: JournalItem[]): string[] {
  return items
    .filter((item) => item.body?.['type'] === 'message' && item.body['role'] === 'user')
    .map((item) => String(item.body?.['text']));
}

/** Bounds the pages read back through one session's journal (200 items a page). */
const HISTORY_PAGES_MAX = 50;

/**
 * Every user message history holds for the session, read page by page from the tail back (a busy
 * run writes more than one page of items); undefined while history cannot answer.
 */
async function storedUserTexts(sessionId: string, query: string): Promise<string[] | undefined> {
  const items = new Map<string, JournalItem>();
  let cursor: string | undefined;
  for (let page = 0; page < HISTORY_PAGES_MAX; page += 1) {
    const direction = cursor === undefined ? 'tail' : `before&cursor=${encodeURIComponent(cursor)}`;
    const reply = await e2e.owner.call<{
      ok: boolean;
      page: {
        items: JournalItem[];
        hasOlder: boolean;
        window: { oldest: { epoch: string; sequence: number } | null };
      };
      snapshot: { items: JournalItem[] };
    }>('GET', `/api/v1/sessions/${sessionId}/history?${query}&direction=${direction}&limit=200`);
    const data = reply.body.data;
    if (!data) return undefined;
    if (!data.ok) return userTexts(data.snapshot.items);
    for (const item of data.page.items) items.set(item.itemId, item);
    const oldest = data.page.window.oldest;
    if (!data.page.hasOlder || !oldest) break;
    cursor = `${oldest.epoch}:${oldest.sequence}`;
  }
  return userTexts([...items.values()]);
}

/** Follows one session's SSE stream through the balancer, resuming from the last event id. */
async function follow(url: string, view: SseView, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
    if (view.lastEventId !== undefined) headers['last-event-id'] = view.lastEventId;
    try {
      const response = await fetch(url, { headers, signal: stop });
      if (response.status !== 200 || !response.body) {
        if (response.status === 503) noteRetry('sse 503');
        else failures.push(`sse: HTTP ${response.status}`);
        await response.body?.cancel();
        await sleep(RETRY_PAUSE_MS);
        continue;
      }
      let buffer = '';
      const decoder = new TextDecoder();
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let type = 'message';
          let id: string | undefined;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) type = line.slice(7);
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) view.apply(type, id, data.join('\n'));
        }
      }
    } catch (error) {
      // The client's own abort ends the run; a stream the api ended on shutdown just resumes.
      if (stop.aborted) return;
      if ((error as Error).name !== 'TypeError') failures.push(`sse: ${(error as Error).message}`);
    }
    view.reconnects += 1;
  }
}

/** One session's lock: its clients take turns at send + watch (a session runs one turn at a time). */
class Turns {
  private tail: Promise<void> = Promise.resolve();
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

test('a rolling restart of 2 api and 3 router replicas under load fails no request and loses or doubles no message', async () => {
  const edgeId = stack.edge!.id;
  const discovered = await call({ edge_id: edgeId, action: 'discover' });
  const installation = discovered.installations!.find((candidate) => candidate.kind === 'scripted')!;
  const created = await e2e.owner.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: 'rollout',
    kind: 'scripted',
    edge_id: edgeId,
    installation_id: installation.id,
    project: e2e.projectDir,
  });
  expect(created.status).toBe(200);
  const accessId = created.body.data!.id;
  const query = `edge_id=${edgeId}&access_id=${accessId}`;

  const sessions: { id: string; revision: number; turns: Turns; sent: string[] }[] = [];
  for (let index = 0; index < SESSIONS; index += 1) {
    const started = await call({
      edge_id: edgeId,
      action: 'start',
      access_id: accessId,
      installation_id: installation.id,
      project: e2e.projectDir,
    });
    sessions.push({ id: started.session_id!, revision: started.revision ?? 0, turns: new Turns(), sent: [] });
  }

  const stopSending = new AbortController();
  const stopStreaming = new AbortController();
  let answered = 0;
  /** Sends between request and answer right now; sampled as each replica receives SIGTERM. */
  let sendsInFlight = 0;
  let sendsAtSigterm = 0;
  const views: SseView[] = [];
  const streams: Promise<void>[] = [];
  const clients = Array.from({ length: CLIENTS }, async (_, client) => {
    const session = sessions[client % SESSIONS]!;
    const base = { edge_id: edgeId, access_id: accessId, session_id: session.id };
    const view = new SseView();
    views.push(view);
    streams.push(
      follow(`${balancer.url}/api/v1/sessions/${session.id}/events?${query}`, view, stopStreaming.signal),
    );
    for (let round = 0; !stopSending.signal.aborted; round += 1) {
      await session.turns.run(async () => {
        if (stopSending.signal.aborted) return;
        const text = `client ${client} round ${round}`;
        const body: EdgeAgentRequest = { ...base, action: 'send', text };
        sendsInFlight += 1;
        try {
          await call({
            ...body,
            client_operation_id: `${Date.now()}-${randomBytes(16).toString('hex')}`,
            payload_fingerprint: operationFingerprint('send', body),
          });
        } finally {
          sendsInFlight -= 1;
        }
        session.sent.push(text);
        answered += 1;
        session.revision = await waitIdle(base, session.revision);
      });
    }
  });
  const load = Promise.all(clients);

  await until(async () => answered >= WARMUP_SENDS, 'the load flowing');
  const exits: Record<string, number | null> = {};
  const phases: string[] = [];
  for (const name of ROLLOUT) {
    const before = answered;
    const began = Date.now();
    sendsAtSigterm += sendsInFlight;
    exits[name] = await stack.stop(name, 'SIGTERM');
    const stopped = Date.now();
    await stack.start(name);
    await until(() => isReady(name), `${name} ready again`);
    if (name.startsWith('api')) {
      await until(async () => balancer.readyBackends().length === 2, `${name} back behind the balancer`);
    }
    phases.push(`${name} stopped in ${stopped - began} ms, ready after ${Date.now() - stopped} ms`);
    await sleep(SETTLE_MS);
    await until(async () => answered > before, `sends answered while ${name} restarted`);
  }
  stopSending.abort();
  await load;
  // The streams stay open until every client has seen its session's last turn.
  await until(
    async () =>
      views.every((view, client) => view.userTexts().length >= sessions[client % SESSIONS]!.sent.length),
    'every SSE client caught up',
    CONVERGE_TIMEOUT_MS,
  ).catch(() => undefined);
  stopStreaming.abort();
  await Promise.all(streams);

  // Every replica stopped cleanly within its grace period, and no client request failed.
  expect(exits).toEqual(Object.fromEntries(ROLLOUT.map((name) => [name, 0])));
  console.log(
    `rolling restart: ${answered} sends, retryable answers ${JSON.stringify(Object.fromEntries(retried))}, ` +
      `${sendsAtSigterm} sends in flight at the SIGTERMs, balancer ${JSON.stringify(balancer.counts)}, SSE reconnects ${views.map((view) => view.reconnects).join(',')}; ` +
      phases.join('; '),
  );
  expect(failures).toEqual([]);
  expect(balancer.counts.failed).toBe(0);
  // The stops met sends on their way (each of them completed or was refused retryably above).
  expect(sendsAtSigterm).toBeGreaterThan(0);

  // History holds each acknowledged send exactly once, and so does every client's SSE view.
  const sorted = (texts: string[]) => [...texts].sort();
  for (const session of sessions) {
    let stored: string[] = [];
    await until(
      async () => {
        stored = (await storedUserTexts(session.id, query)) ?? [];
        return stored.length >= session.sent.length;
      },
      `session ${session.id} stored in history`,
      CONVERGE_TIMEOUT_MS,
    ).catch(() => undefined);
    expect(sorted(stored)).toEqual(sorted(session.sent));
  }
  views.forEach((view, client) => {
    expect(sorted(view.userTexts())).toEqual(sorted(sessions[client % SESSIONS]!.sent));
  });
});
