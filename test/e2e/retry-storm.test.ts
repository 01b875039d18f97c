// The retry storm of issue 4 ("Done when"): 200 sends over HTTP, each issued 5 times at once with
// random delays and the same client_operation_id and fingerprint, while one of two router
// replicas is killed with SIGKILL mid-storm. Every call is answered ok (replayed or not) or with a
// documented refusal, and the journal holds exactly 200 user messages.
import { randomBytes } from 'node:crypto';
import { jest } from '@jest/globals';
import {
  LIMITS_OFF_ENV,
  signToken,
  type ApiClient,
  TEST_JWT_SECRET,
  type Snapshot,
  sleep,
  waitUntil,
  createAccess,
  findInstallation,
  startOnAccess,
} from '#test-support';
import {
  OPERATION_REFUSAL_CODES,
  operationFingerprint,
  type EdgeAgentRequest,
  type HistoryJournalPageReply,
} from '#contracts';
import type { Stack } from '../../scripts/stack/launcher.js';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';

jest.setTimeout(240_000);

/** An edge keeps at most EDGE_LIVE_SESSIONS_MAX (4) sessions live: 4 sessions × 50 sends. */
const SESSIONS = 4;
const SENDS_PER_SESSION = 50;
const COPIES = 5;
const COPY_DELAY_MAX_MS = 150;
/** The router replica dies once this many sends have been answered. */
const KILL_AFTER_SENDS = 60;
/** A call the router never answered (its replica died) is retried with the same id this often. */
const CALL_ATTEMPTS_MAX = 60;
const RETRY_PAUSE_MS = 200;
/**
 * A client gives up on a call after this long and retries it with the same id, as a real client
 * would: a request the killed replica had taken is otherwise only answered at the api's timeout.
 * Watches wait at most TETHER_WATCH_WAIT_MS (shortened below), well inside it.
 */
const CLIENT_TIMEOUT_MS = 6_000;
const WATCH_WAIT_MS = 2_000;
const CONVERGE_TIMEOUT_MS = 45_000;

let e2e: E2eStack;
let stack: Stack;
let alice: ApiClient;
let token: string;
const owner = `storm${Date.now() % 100000}`;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2estorm',
    owner,
    script: { rules: [{ steps: [{ type: 'reply', text: 'ok.' }] }] },
    stack: {
      secondRouter: true,
      // A dead replica's claim lapses quickly, and a duplicate waits long enough to see it lapse.
      extraEnv: {
        // 1,000 calls as one user in seconds: the storm is the point here, not the user's rate.
        ...LIMITS_OFF_ENV,
        TETHER_OPERATION_CLAIM_MS: '3000',
        TETHER_OPERATION_WAIT_MS: '4000',
        TETHER_WATCH_WAIT_MS: String(WATCH_WAIT_MS),
      },
    },
  });
  stack = e2e.stack;
  alice = e2e.owner;
  token = await signToken(TEST_JWT_SECRET, owner);
  // Both replicas serve before the storm, so the kill lands on requests in flight.
  await waitUntil(() => /\[router-2\].*Session router ready/.test(stack.output()), 'router-2 ready', {
    timeoutMs: 60_000,
  });
});

afterAll(async () => {
  await e2e?.close();
});

/** POST /api/v1/edge-agents with the client's own timeout; throws on a timeout or a non-200. */
async function agent(request: Record<string, unknown>): Promise<Snapshot> {
  const response = await fetch(`${stack.apiUrl}/api/v1/edge-agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(request),
    signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
  });
  const body = (await response.json()) as { data?: Snapshot };
  if (response.status !== 200 || !body.data)
    throw new Error(`${String(request.action)}: HTTP ${response.status}`);
  return body.data;
}

/** Sends the storm settled `unknown` and then dispatched again with `retry_unknown`. */
let unknownRetried = 0;

/**
 * One client call, retried with the very same request while no router answered it: a transport
 * error, or `unavailable` without an operation (the api's answer when its router call failed),
 * or `operation_unknown` while the first copy is still running (docs/contract.md: retry the id).
 * A send whose submission settled `unknown` (a replica died after the edge may have had it) is
 * what docs/contract.md tells a client to resend with `retry_unknown`: the edge answers a dispatch
 * id it already had with that outcome, so this never makes a second message.
 */
async function call(request: EdgeAgentRequest): Promise<Snapshot> {
  let current = request;
  for (let attempt = 0; attempt < CALL_ATTEMPTS_MAX; attempt += 1) {
    let reply: Snapshot;
    try {
      reply = await agent(current as unknown as Record<string, unknown>);
    } catch {
      await sleep(RETRY_PAUSE_MS);
      continue;
    }
    const unanswered = reply.status === 'unavailable' && !reply.operation;
    const stillRunning = reply.operation?.refusal?.code === 'agent_session_operation_unknown';
    if (reply.operation?.submission?.dispatch_state === 'unknown') {
      if (!current.retry_unknown) unknownRetried += 1;
      current = { ...request, retry_unknown: true };
    } else if (!unanswered && !stillRunning) {
      return reply;
    }
    await sleep(RETRY_PAUSE_MS);
  }
  throw new Error(`${request.action} ${request.client_operation_id} was never answered`);
}

/** Watches until the turn after `from` finished (a watch that hit the dead replica is retried). */
async function waitIdle(base: Record<string, string>, from: number): Promise<number> {
  let cursor = from;
  const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    let watched: Snapshot;
    try {
      watched = await agent({ ...base, action: 'watch', cursor: String(cursor) });
    } catch {
      await sleep(RETRY_PAUSE_MS);
      continue;
    }
    if (watched.status !== 'ok') {
      await sleep(RETRY_PAUSE_MS);
      continue;
    }
    cursor = watched.revision ?? cursor;
    if (!watched.running && cursor > from) return cursor;
  }
  throw new Error(`session ${base.session_id} did not finish its turn after revision ${from}`);
}

/** User messages in the session's journal, read from history's tail page. */
async function userMessages(sessionId: string, query: string): Promise<number> {
  const reply = await alice.call<HistoryJournalPageReply>(
    'GET',
    `/api/v1/sessions/${sessionId}/history?${query}&direction=tail&limit=200`,
  );
  const data = reply.body.data;
  if (reply.status !== 200 || !data) return -1;
  const items = data.ok ? data.page.items : data.snapshot.items;
  if (data.ok && data.page.hasOlder) throw new Error('expected every item on one page');
  return items.filter((item) => item.body?.['type'] === 'message' && item.body['role'] === 'user').length;
}

const DOCUMENTED = new Set<string>(OPERATION_REFUSAL_CODES);

test('200 sends retried 5 times each while a router replica dies leave exactly 200 user messages', async () => {
  const edgeId = stack.edge!.id;
  const access = {
    edgeId,
    installation: await findInstallation(alice, edgeId),
    project: e2e.projectDir,
    name: 'storm',
  };
  const accessId = await createAccess(alice, access);
  const query = `edge_id=${edgeId}&access_id=${accessId}`;

  const sessions: { sessionId: string; revision: number }[] = [];
  for (let index = 0; index < SESSIONS; index += 1) {
    const { sessionId, revision } = await startOnAccess(alice, { ...access, accessId });
    sessions.push({ sessionId, revision });
  }

  const answers: Snapshot[] = [];
  let answeredSends = 0;
  let killed: Promise<void> | undefined;

  const storm = sessions.map(async (session) => {
    const base = { edge_id: edgeId, access_id: accessId, session_id: session.sessionId };
    for (let round = 0; round < SENDS_PER_SESSION; round += 1) {
      const body: EdgeAgentRequest = { ...base, action: 'send', text: `storm ${round}` };
      const request: EdgeAgentRequest = {
        ...body,
        client_operation_id: `${Date.now()}-${randomBytes(16).toString('hex')}`,
        payload_fingerprint: operationFingerprint('send', body),
      };
      const replies = await Promise.all(
        Array.from({ length: COPIES }, async () => {
          await sleep(Math.random() * COPY_DELAY_MAX_MS);
          return call(request);
        }),
      );
      answers.push(...replies);
      answeredSends += 1;
      if (answeredSends === KILL_AFTER_SENDS) killed = stack.kill('router', 'SIGKILL');
      session.revision = await waitIdle(base, session.revision);
    }
  });
  await Promise.all(storm);
  await killed;
  expect(killed).toBeDefined();
  expect(stack.running('router')).toBe(false);

  // Every answer is ok (a first run or a replay) or a documented refusal.
  expect(answers).toHaveLength(SESSIONS * SENDS_PER_SESSION * COPIES);
  const undocumented = answers.filter(
    (answer) =>
      answer.status !== 'ok' && !(answer.operation?.refusal && DOCUMENTED.has(answer.operation.refusal.code)),
  );
  expect(undocumented).toEqual([]);
  expect(answers.every((answer) => answer.operation !== undefined)).toBe(true);
  expect(answers.some((answer) => answer.operation?.replayed)).toBe(true);
  // Every send ended settled: the unconfirmed ones were dispatched again on retry_unknown.
  expect(answers.filter((answer) => answer.operation?.submission?.dispatch_state === 'unknown')).toEqual([]);
  console.log(
    `retry storm: ${unknownRetried} send copies resent with retry_unknown after an unknown settlement`,
  );

  // The journal, as history pages it, holds one user message per send: no loss, no duplicate.
  const counts = new Map<string, number>();
  const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
  for (const session of sessions) {
    let count = await userMessages(session.sessionId, query);
    while (count < SENDS_PER_SESSION && Date.now() < deadline) {
      await sleep(RETRY_PAUSE_MS);
      count = await userMessages(session.sessionId, query);
    }
    counts.set(session.sessionId, count);
  }
  const total = [...counts.values()].reduce((sum, count) => sum + count, 0);
  if (total !== SESSIONS * SENDS_PER_SESSION) {
    // What the answers said, and the services' recent output: the failure's evidence.
    const tally = new Map<string, number>();
    for (const answer of answers) {
      const key = `${answer.status}/${answer.operation?.submission?.dispatch_state ?? answer.operation?.refusal?.code ?? '-'}`;
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
    console.log({ counts: Object.fromEntries(counts), tally: Object.fromEntries(tally) });
    console.log(stack.output().split('\n').slice(-200).join('\n'));
  }
  expect([...counts.values()].filter((count) => count !== SENDS_PER_SESSION)).toEqual([]);
  expect(total).toBe(SESSIONS * SENDS_PER_SESSION);
});
