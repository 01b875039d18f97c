// The whole chain over HTTP only: api → session router → edge connector (scripted agent) →
// back, with history persisted in Postgres, on real NATS, Redis and Postgres.
import pg from 'pg';
import {
  signToken,
  type ApiClient,
  type TestDatabase,
  TEST_JWT_SECRET,
  type Snapshot,
  eventually,
  startSession,
  watchUntilIdle,
  type StartedSession,
} from '#test-support';
import { Aad, HistoryCipher } from '../../apps/history/src/common/history-cipher.js';
import { DEV_HISTORY_KEY, type Stack } from '../../scripts/stack/launcher.js';
import { printOutputOnFailure, startE2eStack, type E2eStack } from '../support/e2e-stack.js';
import { jest } from '@jest/globals';

jest.setTimeout(120_000);

let e2e: E2eStack;
let database: TestDatabase;
let stack: Stack;
let projectDir: string;
const owner = `alice${Date.now() % 100000}`;
let alice: ApiClient;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2echain',
    owner,
    // A slow rule keeps a turn running long enough to kill the router in the middle of it.
    script: {
      rules: [
        {
          match: { prefix: 'slow' },
          steps: [{ type: 'reply', text: 'streamed slowly. '.repeat(20), deltas: 20, delay_ms: 100 }],
        },
        { steps: [{ type: 'reply', text: 'Your prompt had {prompt_length} characters.' }] },
      ],
    },
  });
  ({ stack, database, projectDir } = e2e);
  alice = e2e.owner;
});

afterAll(async () => {
  await e2e?.close();
});

printOutputOnFailure(() => stack);

/** Creates an access to the demo edge and starts a session in it. */
async function startChainSession(): Promise<StartedSession> {
  const session = await startSession(alice, stack.edge!.id, projectDir, { name: 'e2e' });
  expect(session.sessionId).toMatch(/^[0-9a-f]{32}$/);
  return session;
}

/** The stored history row of a session, read straight from Postgres. */
async function storedSession(sessionId: string): Promise<{ revision: string; payload: Buffer } | undefined> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const result = await client.query(
      'SELECT revision, payload FROM session_histories WHERE session_id = $1',
      [sessionId],
    );
    return result.rows[0];
  } finally {
    await client.end();
  }
}

test('start → send → watch → poll over HTTP, listed in sessions from history', async () => {
  const { edgeId, accessId, sessionId, revision } = await startChainSession();
  const base = { edge_id: edgeId, access_id: accessId, session_id: sessionId };

  const sent = await alice.agent<Snapshot>({ ...base, action: 'send', text: 'hello from the e2e suite' });
  expect(sent.status).toBe('ok');
  expect(typeof sent.request_service_ms).toBe('number');

  const idle = await watchUntilIdle(alice, base, revision, { tolerateRestarts: true });
  expect(idle.revision).toBeGreaterThan(revision);

  const polled = await alice.agent<Snapshot>({ ...base, action: 'poll' });
  expect(polled.status).toBe('ok');
  expect(polled.messages?.[0]).toEqual(
    expect.objectContaining({ role: 'user', text: 'hello from the e2e suite' }),
  );
  const reply = polled.messages?.find((message) => message.role === 'assistant');
  expect(reply?.text?.length ?? 0).toBeGreaterThan(0);

  const listed = await eventually(async () => {
    const sessions = await alice.agent<Snapshot>({
      edge_id: edgeId,
      action: 'sessions',
      access_id: accessId,
    });
    return sessions.sessions?.some((session) => session.session_id === sessionId) ? sessions : undefined;
  }, 'the session showing in sessions');
  expect(listed.history_total).toBeGreaterThanOrEqual(1);
});

test('another user cannot reach the connector or the session', async () => {
  const { edgeId, accessId, sessionId } = await startChainSession();
  const bob = alice.withToken(await signToken(TEST_JWT_SECRET, `bob${Date.now() % 100000}`));

  const connectors = await bob.call<{ id: string }[]>('GET', '/api/v1/edge-agents/connectors');
  expect(connectors.status).toBe(200);
  expect(connectors.body.data?.some((connector) => connector.id === edgeId)).toBe(false);

  const foreign = await bob.call('POST', '/api/v1/edge-agents', {
    edge_id: edgeId,
    action: 'poll',
    session_id: sessionId,
  });
  expect(foreign.status).toBe(404);

  // The owner with another access of her own: the edge scopes sessions by (actor, access).
  const otherAccess = await alice.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: 'other',
    kind: 'scripted',
    edge_id: edgeId,
    installation_id: 'f'.repeat(32),
    project: projectDir,
  });
  expect(otherAccess.status).toBe(200);
  const wrongScope = await alice.agent<Snapshot>({
    edge_id: edgeId,
    action: 'poll',
    access_id: otherAccess.body.data!.id,
    session_id: sessionId,
  });
  expect(wrongScope.status).toBe('not_found');
  const right = await alice.agent<Snapshot>({
    edge_id: edgeId,
    action: 'poll',
    access_id: accessId,
    session_id: sessionId,
  });
  expect(right.status).toBe('ok');
});

test('permissions and strict decoding', async () => {
  const edgeId = stack.edge!.id;
  const noAgent = alice.withToken(await signToken(TEST_JWT_SECRET, owner, ['connectors:update']));
  expect(
    (await noAgent.call('POST', '/api/v1/edge-agents', { edge_id: edgeId, action: 'discover' })).status,
  ).toBe(403);

  const unknown = await alice.call('POST', '/api/v1/edge-agents', {
    edge_id: edgeId,
    action: 'discover',
    actor_id: owner,
  });
  expect(unknown.status).toBe(400);

  const huge = await alice.call(
    'POST',
    '/api/v1/edge-agents',
    undefined,
    JSON.stringify({
      edge_id: edgeId,
      action: 'discover',
      text: 'x'.repeat(300 * 1024),
    }),
  );
  expect(huge.status).toBe(400);
  expect(huge.headers.get('cache-control')).toBe('no-store');
});

test('a SIGKILLed session router mid-turn loses nothing the client was told succeeded', async () => {
  const { edgeId, accessId, sessionId, revision } = await startChainSession();
  const base = { edge_id: edgeId, access_id: accessId, session_id: sessionId };
  const sent = await alice.agent<Snapshot>({ ...base, action: 'send', text: 'slow: survive a router crash' });
  expect(sent.status).toBe('ok');
  expect(sent.running).toBe(true);

  await stack.kill('router', 'SIGKILL');
  // While the router is gone the api answers `unavailable`, never a silent success.
  const during = await alice.agent<Snapshot>({ ...base, action: 'poll' });
  expect(during.status).toBe('unavailable');
  await stack.start('router');
  await stack.routerReady();

  const idle = await watchUntilIdle(alice, base, revision, { tolerateRestarts: true });
  expect(idle.messages?.[0]).toEqual(
    expect.objectContaining({ role: 'user', text: 'slow: survive a router crash' }),
  );
  expect(idle.messages?.[1]?.text).toBe('streamed slowly. '.repeat(20));
  expect(
    idle.messages?.some((message) => message.role === 'assistant' && (message.text?.length ?? 0) > 0),
  ).toBe(true);

  // The edge retried its updates until a router stored them: history holds the final state, the
  // very revision the client saw, with both messages.
  const stored = await eventually(async () => {
    const row = await storedSession(sessionId);
    return row && Number(row.revision) >= (idle.revision ?? 0) ? row : undefined;
  }, 'the final state reaching history after the crash');
  expect(Number(stored.revision)).toBe(idle.revision);
  // Stored encrypted (apps/history/src/common/history-cipher.ts) under the stack's dev key.
  const scope = { ownerId: owner, accessId, edgeId, sessionId };
  const payload = new HistoryCipher(DEV_HISTORY_KEY).decryptJson<Snapshot>(
    stored.payload,
    Aad.payload(scope),
  );
  expect(payload.messages?.map((message) => message.role)).toEqual(['user', 'assistant']);
});
