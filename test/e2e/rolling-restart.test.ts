// A rolling restart under load (issue 12, "Done when"): two api replicas behind a local balancer
// that routes as a Kubernetes Service with readiness does, three routers, and 16 clients in a
// closed loop of send + watch + SSE for the whole run. Every api and router replica is stopped
// with SIGTERM and started again, one after another. The run ends with 0 failed client requests,
// and every session's journal (as history pages it, and as each client's SSE stream saw it)
// holds each acknowledged send exactly once: nothing lost, nothing duplicated. A send that meets
// a stopping replica completes or is refused with a retryable status; the client resends it with
// the same operation id (docs/contract.md "Idempotent mutations"), never making a second message.
import { jest } from '@jest/globals';
import { signToken, TEST_JWT_SECRET, sleep, waitUntil } from '#test-support';
import type { ServiceName, Stack } from '../../scripts/stack/launcher.js';
import {
  LoadClient,
  SseView,
  startScriptedSessions,
  storedUserTexts,
  Turns,
} from '../support/closed-loop.js';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';
import { LIMITS_OFF_ENV } from '../support/limits.js';
import type { LoadBalancer } from '../support/load-balancer.js';
import { ReplicaPorts } from '../support/replica-ports.js';

// Seven cold starts (five of them during the run) on a shared 2-core machine: minutes, not seconds.
jest.setTimeout(600_000);

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

let e2e: E2eStack;
let stack: Stack;
let balancer: LoadBalancer;
let client: LoadClient;
const owner = `roll${Date.now() % 100000}`;
let ports: ReplicaPorts;

/** Waits across restarts: a probe that fails counts as "not yet". */
function until(probe: () => Promise<boolean>, what: string, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  return waitUntil(probe, what, {
    timeoutMs,
    intervalMs: RETRY_PAUSE_MS,
    ignoreErrors: true,
    detail: () => stack.output(),
  });
}

const isReady = (name: ServiceName) => ports.isReady(name);

beforeAll(async () => {
  ports = await ReplicaPorts.allocate(ROLLOUT);
  e2e = await startE2eStack({
    label: 'e2eroll',
    owner,
    // A short streamed reply: every turn writes a few journal rows the SSE streams must carry.
    script: {
      rules: [{ steps: [{ type: 'reply', text: 'rolled. '.repeat(4), deltas: 3, delay_ms: 30 }] }],
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
      serviceEnv: ports.serviceEnv(),
    },
  });
  stack = e2e.stack;
  const token = await signToken(TEST_JWT_SECRET, owner);
  for (const name of ROLLOUT) await until(() => isReady(name), `${name} ready`);
  balancer = await ports.balancer(stack);
  client = new LoadClient({
    url: () => balancer.url,
    token,
    timeoutMs: CLIENT_TIMEOUT_MS,
    transportRetryable: false,
    pauseMs: RETRY_PAUSE_MS,
    attemptsMax: CALL_ATTEMPTS_MAX,
  });
  await until(
    () => Promise.resolve(balancer.readyBackends().length === 2),
    'both api replicas behind the balancer',
  );
});

afterAll(async () => {
  await balancer?.stop();
  await e2e?.close();
});

test('a rolling restart of 2 api and 3 router replicas under load fails no request and loses or doubles no message', async () => {
  const started = await startScriptedSessions(client, e2e, 'rollout', SESSIONS);
  const { edgeId, accessId } = started;
  const query = `edge_id=${edgeId}&access_id=${accessId}`;
  const sessions = started.sessions.map((session) => ({
    ...session,
    turns: new Turns(),
    sent: [] as string[],
  }));

  const stopSending = new AbortController();
  const stopStreaming = new AbortController();
  let answered = 0;
  /** Sends between request and answer right now; sampled as each replica receives SIGTERM. */
  let sendsInFlight = 0;
  let sendsAtSigterm = 0;
  const views: SseView[] = [];
  const streams: Promise<void>[] = [];
  const clients = Array.from({ length: CLIENTS }, async (_, index) => {
    const session = sessions[index % SESSIONS]!;
    const base = { edge_id: edgeId, access_id: accessId, session_id: session.id };
    const view = new SseView();
    views.push(view);
    streams.push(client.follow(`/api/v1/sessions/${session.id}/events?${query}`, view, stopStreaming.signal));
    for (let round = 0; !stopSending.signal.aborted; round += 1) {
      await session.turns.run(async () => {
        if (stopSending.signal.aborted) return;
        const text = `client ${index} round ${round}`;
        sendsInFlight += 1;
        try {
          await client.send(base, text);
        } finally {
          sendsInFlight -= 1;
        }
        session.sent.push(text);
        answered += 1;
        session.revision = await client.waitIdle(base, session.revision, CONVERGE_TIMEOUT_MS);
      });
    }
  });
  const load = Promise.all(clients);

  await until(() => Promise.resolve(answered >= WARMUP_SENDS), 'the load flowing');
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
      await until(
        () => Promise.resolve(balancer.readyBackends().length === 2),
        `${name} back behind the balancer`,
      );
    }
    phases.push(`${name} stopped in ${stopped - began} ms, ready after ${Date.now() - stopped} ms`);
    await sleep(SETTLE_MS);
    await until(() => Promise.resolve(answered > before), `sends answered while ${name} restarted`);
  }
  stopSending.abort();
  await load;
  // The streams stay open until every client has seen its session's last turn.
  await until(
    () =>
      Promise.resolve(
        views.every((view, index) => view.userTexts().length >= sessions[index % SESSIONS]!.sent.length),
      ),
    'every SSE client caught up',
    CONVERGE_TIMEOUT_MS,
  ).catch(() => undefined);
  stopStreaming.abort();
  await Promise.all(streams);

  // Every replica stopped cleanly within its grace period, and no client request failed.
  expect(exits).toEqual(Object.fromEntries(ROLLOUT.map((name) => [name, 0])));
  console.log(
    `rolling restart: ${answered} sends, retryable answers ${JSON.stringify(Object.fromEntries(client.retried))}, ` +
      `${sendsAtSigterm} sends in flight at the SIGTERMs, balancer ${JSON.stringify(balancer.counts)}, SSE reconnects ${views.map((view) => view.reconnects).join(',')}; ` +
      phases.join('; '),
  );
  expect(client.failures).toEqual([]);
  // Only a stopping replica's refusals were met: never `busy` (a session runs one turn at a time).
  expect([...client.retried.keys()].filter((what) => what.startsWith('status busy'))).toEqual([]);
  expect(balancer.counts.failed).toBe(0);
  // The stops met sends on their way (each of them completed or was refused retryably above).
  expect(sendsAtSigterm).toBeGreaterThan(0);

  // History holds each acknowledged send exactly once, and so does every client's SSE view.
  const sorted = (texts: string[]) => [...texts].sort();
  for (const session of sessions) {
    let stored: string[] = [];
    await until(
      async () => {
        stored = (await storedUserTexts(e2e.owner, session.id, query)) ?? [];
        return stored.length >= session.sent.length;
      },
      `session ${session.id} stored in history`,
      CONVERGE_TIMEOUT_MS,
    ).catch(() => undefined);
    expect(sorted(stored)).toEqual(sorted(session.sent));
  }
  views.forEach((view, index) => {
    expect(sorted(view.userTexts())).toEqual(sorted(sessions[index % SESSIONS]!.sent));
  });
});
