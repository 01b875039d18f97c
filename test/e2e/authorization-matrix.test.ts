// The authorization matrix on the real stack: every route and every edge action, tried by the
// owner, by another user holding every permission, by the owner without the permission it needs,
// and with every kind of bad token. Only the owner gets through; "not yours" and "does not exist"
// get the same answer, byte for byte (timing is not asserted here: a test must not depend on a machine's speed).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { EDGE_AGENT_ACTIONS, type EdgeAgentAction } from '#contracts';
import {
  ApiClient,
  LIMITS_OFF_ENV,
  type ApiReply,
  TEST_JWT_SECRET,
  eventually,
  startSession,
  validRequest,
  watchUntil,
  type ObjectIds,
  type Snapshot,
  type StartedSession,
} from '#test-support';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';
import { jest } from '@jest/globals';

jest.setTimeout(180_000);

const ISSUER = 'https://issuer.matrix.test';
const AUDIENCE = 'tether-matrix';
const ALL = ['ai.access.use', 'connectors:update', 'files.read', 'files.upload'];
const suffix = Date.now() % 100_000;
const ALICE = `alice${suffix}`;
const BOB = `bob${suffix}`;
/** Ids of the right shape that name nothing. */
const NOBODY_EDGE = '987654321987';
const NOBODY_ID = 'f'.repeat(32);

interface TokenOptions {
  permissions?: string[];
  issuer?: string;
  audience?: string;
  expiresAt?: number;
  notBefore?: number;
  secret?: string;
}

async function token(sub: string, options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ permissions: options.permissions ?? ALL })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt(now - 60)
    .setExpirationTime(options.expiresAt ?? now + 3600);
  if (options.notBefore !== undefined) jwt.setNotBefore(options.notBefore);
  return jwt.sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
}

let e2e: E2eStack;
let alice: ApiClient;
let bob: ApiClient;
/** Alice's objects: her live session (with a pending approval and input request) on her edge. */
let own: StartedSession;
let approvalId: string;
let inputId: string;
/** Bob's own connector (enrolled, never started) and his access on it. */
let bobEdge: string;
let bobAccess: string;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2ematrix',
    owner: ALICE,
    stack: {
      extraEnv: {
        ...LIMITS_OFF_ENV,
        TETHER_JWT_ISSUER: ISSUER,
        TETHER_JWT_AUDIENCE: AUDIENCE,
        TETHER_SSE_REAUTHORIZE_MS: '500',
      },
    },
  });
  alice = new ApiClient(e2e.stack.apiUrl, await token(ALICE));
  bob = new ApiClient(e2e.stack.apiUrl, await token(BOB));
  writeFileSync(join(e2e.projectDir, 'notes.txt'), 'alice only');
  own = await startSession(alice, e2e.stack.edge!.id, e2e.projectDir);
  const base = { edge_id: own.edgeId, access_id: own.accessId, session_id: own.sessionId };
  // A second session holds a pending approval and a pending input request for the matrix.
  const prompts = await startSession(alice, own.edgeId, e2e.projectDir);
  const promptBase = { ...base, session_id: prompts.sessionId, access_id: prompts.accessId };
  await alice.agent({ ...promptBase, action: 'send', text: 'approve me' });
  const waiting = await watchUntil(
    alice,
    promptBase,
    prompts.revision,
    (s) => (s.approvals?.length ?? 0) > 0,
  );
  approvalId = waiting.approvals![0]!.id;
  const asking = await startSession(alice, own.edgeId, e2e.projectDir);
  const askBase = { ...base, session_id: asking.sessionId, access_id: asking.accessId };
  await alice.agent({ ...askBase, action: 'send', text: 'ask me' });
  const asked = await watchUntil(alice, askBase, asking.revision, (s) => (s.input_requests?.length ?? 0) > 0);
  inputId = asked.input_requests![0]!.id;
  // The edge runs at most four live sessions: the prompts' sessions have served their purpose.
  await alice.agent({ ...promptBase, action: 'stop' });
  await alice.agent({ ...askBase, action: 'stop' });
  await alice.agent({ ...base, action: 'send', text: 'hello' });
  await watchUntil(alice, base, own.revision, (s) => !s.running && (s.revision ?? 0) > own.revision);

  const enrolled = await bob.call<{ connector: { id: string } }>('POST', '/api/v1/edge-agents/connectors', {
    name: 'bob-laptop',
    device: 'bob-laptop',
  });
  expect(enrolled.status).toBe(200);
  bobEdge = enrolled.body.data!.connector.id;
  const access = await bob.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: 'bob',
    kind: 'scripted',
    edge_id: bobEdge,
    installation_id: own.installationId,
    project: '/srv/bob',
  });
  if (access.status !== 200) throw new Error(`bob's access: ${JSON.stringify(access.body)}`);
  bobAccess = access.body.data!.id;
});

afterAll(async () => {
  await e2e?.close();
});

/** A valid request on the given objects, with the owner's installation and project. */
const request = (action: EdgeAgentAction, ids: ObjectIds) =>
  validRequest(action, ids, { installation: own.installationId, project: e2e.projectDir });

const alicesIds = (): ObjectIds => ({
  edge: own.edgeId,
  access: own.accessId,
  session: own.sessionId,
  approval: approvalId,
  input: inputId,
  transfer: NOBODY_ID,
});
const nobodysIds = (edge: string, access: string): ObjectIds => ({
  edge,
  access,
  session: NOBODY_ID,
  approval: NOBODY_ID,
  input: NOBODY_ID,
  transfer: NOBODY_ID,
});

/** What a client can observe of an answer: status and body (nothing else differs by design). */
function observed(reply: ApiReply): string {
  // `request_service_ms` is the api's own time for this request, not about the objects named.
  const data = reply.body.data === undefined ? undefined : { ...reply.body.data, request_service_ms: 0 };
  return JSON.stringify({ status: reply.status, body: { ...reply.body, data } });
}

const act = (client: ApiClient, body: Record<string, unknown>) =>
  client.call('POST', '/api/v1/edge-agents', body);

/** Destructive actions run against a session of their own, after the rest of the matrix. */
const DESTRUCTIVE: ReadonlySet<string> = new Set(['stop', 'delete', 'discard']);

describe('another user with every permission', () => {
  it.each(EDGE_AGENT_ACTIONS.map((action) => [action]))(
    "%s on the owner's connector is refused exactly as on a connector that does not exist",
    async (action) => {
      const foreign = await act(bob, request(action, alicesIds()));
      const missing = await act(bob, request(action, nobodysIds(NOBODY_EDGE, own.accessId)));
      expect(foreign.status).toBe(404);
      expect(observed(foreign)).toBe(observed(missing));
    },
  );

  it.each(EDGE_AGENT_ACTIONS.filter((action) => action !== 'discover').map((action) => [action]))(
    "%s through his own connector with the owner's ids answers as for ids that name nothing",
    async (action) => {
      const ids = { ...alicesIds(), edge: bobEdge, access: bobAccess };
      const foreign = await act(bob, request(action, ids));
      const missing = await act(bob, request(action, nobodysIds(bobEdge, bobAccess)));
      expect(foreign.status).toBeLessThan(500);
      expect(observed(foreign)).toBe(observed(missing));
      if (foreign.status === 200) {
        const data = foreign.body.data as unknown as Snapshot;
        expect(data.messages ?? []).toEqual([]);
        expect(data.session_id === own.sessionId && data.status === 'ok').toBe(false);
      }
    },
  );

  it("cannot name the owner's access on his own connector", async () => {
    const foreign = await act(bob, request('sessions', { ...alicesIds(), edge: bobEdge }));
    const missing = await act(bob, request('sessions', nobodysIds(bobEdge, NOBODY_ID)));
    expect(foreign.status).toBe(404);
    expect(observed(foreign)).toBe(observed(missing));
  });

  it("neither sees nor changes the owner's accesses and connectors", async () => {
    const listed = await bob.call<{ items: { id: string }[] }>('GET', '/api/v1/agent-accesses');
    expect(listed.body.data?.items.map((access) => access.id)).toEqual([bobAccess]);
    const connectors = await bob.call<{ id: string }[]>('GET', '/api/v1/edge-agents/connectors');
    expect(connectors.body.data?.map((connector) => connector.id)).toEqual([bobEdge]);

    const body = {
      name: 'x',
      kind: 'scripted',
      edge_id: own.edgeId,
      installation_id: own.installationId,
      project: '/x',
    };
    for (const method of ['PUT', 'DELETE'] as const) {
      const foreign = await bob.call(
        method,
        `/api/v1/agent-accesses/${own.accessId}`,
        method === 'PUT' ? body : undefined,
      );
      const missing = await bob.call(
        method,
        `/api/v1/agent-accesses/${NOBODY_ID}`,
        method === 'PUT' ? body : undefined,
      );
      expect(foreign.status).toBe(404);
      expect(observed(foreign)).toBe(observed(missing));
    }
    const created = await bob.call('POST', '/api/v1/agent-accesses', body);
    expect(created.status).toBe(404);
    const still = await alice.call<{ items: { id: string }[] }>('GET', '/api/v1/agent-accesses');
    expect(still.body.data?.items.some((access) => access.id === own.accessId)).toBe(true);
  });

  it.each([['history'], ['events']])("cannot read the owner's session %s", async (route) => {
    const path = (session: string, edge: string, access: string) =>
      `/api/v1/sessions/${session}/${route}?edge_id=${edge}&access_id=${access}`;
    const foreign = await bob.call('GET', path(own.sessionId, own.edgeId, own.accessId));
    const missing = await bob.call('GET', path(NOBODY_ID, NOBODY_EDGE, own.accessId));
    expect(foreign.status).toBe(404);
    expect(observed(foreign)).toBe(observed(missing));
    const viaOwnEdge = await bob.call('GET', path(own.sessionId, bobEdge, bobAccess));
    const nothingViaOwnEdge = await bob.call('GET', path(NOBODY_ID, bobEdge, bobAccess));
    expect(viaOwnEdge.status).toBe(404);
    expect(observed(viaOwnEdge)).toBe(observed(nothingViaOwnEdge));
  });
});

describe('the owner without the permission an action needs', () => {
  const needs = (action: EdgeAgentAction): string[] => {
    const route = ['connectors:update', 'ai.access.use'];
    if (action === 'file_list' || action === 'file_read') return [...route, 'files.read'];
    if (action.startsWith('file_')) return [...route, 'files.upload'];
    return route;
  };

  it.each(EDGE_AGENT_ACTIONS.map((action) => [action]))(
    '%s is 403 without each permission it needs',
    async (action) => {
      for (const missing of needs(action)) {
        const client = alice.withToken(await token(ALICE, { permissions: ALL.filter((p) => p !== missing) }));
        const reply = await act(client, request(action, alicesIds()));
        expect({ missing, status: reply.status }).toEqual({ missing, status: 403 });
      }
    },
  );

  it('reads nothing of accesses, sessions or connectors without ai.access.use', async () => {
    const client = alice.withToken(await token(ALICE, { permissions: ['connectors:update', 'files.read'] }));
    const paths = [
      ['GET', '/api/v1/agent-accesses'],
      ['GET', '/api/v1/edge-agents/connectors'],
      ['GET', `/api/v1/sessions/${own.sessionId}/history?edge_id=${own.edgeId}&access_id=${own.accessId}`],
      ['GET', `/api/v1/sessions/${own.sessionId}/events?edge_id=${own.edgeId}&access_id=${own.accessId}`],
    ] as const;
    for (const [method, path] of paths) {
      expect({ path, status: (await client.call(method, path)).status }).toEqual({ path, status: 403 });
    }
    const noUpdate = alice.withToken(await token(ALICE, { permissions: ['ai.access.use'] }));
    const enrolled = await noUpdate.call('POST', '/api/v1/edge-agents/connectors', {
      name: 'x',
      device: 'x',
    });
    expect(enrolled.status).toBe(403);
  });
});

describe('bad tokens', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const badTokens: [string, () => Promise<string | undefined>][] = [
    ['no token', () => Promise.resolve(undefined)],
    ['not a JWT', () => Promise.resolve('not.a.jwt')],
    ['expired', async () => token(ALICE, { expiresAt: now() - 120 })],
    ['not yet valid', async () => token(ALICE, { notBefore: now() + 3600 })],
    ['another issuer', async () => token(ALICE, { issuer: 'https://elsewhere.test' })],
    ['another audience', async () => token(ALICE, { audience: 'someone-else' })],
    ['another key', async () => token(ALICE, { secret: 'another-secret-0123456789abcdef' })],
    [
      'alg none',
      () =>
        Promise.resolve(
          new UnsecuredJWT({ permissions: ALL })
            .setSubject(ALICE)
            .setIssuer(ISSUER)
            .setAudience(AUDIENCE)
            .setExpirationTime('1h')
            .encode(),
        ),
    ],
  ];
  const routes = (): [string, string, unknown][] => [
    ['GET', '/api/v1/edge-agents/connectors', undefined],
    ['POST', '/api/v1/edge-agents/connectors', { name: 'x', device: 'x' }],
    ['GET', '/api/v1/agent-accesses', undefined],
    [
      'POST',
      '/api/v1/agent-accesses',
      {
        name: 'x',
        kind: 'scripted',
        edge_id: own.edgeId,
        installation_id: own.installationId,
        project: '/x',
      },
    ],
    [
      'PUT',
      `/api/v1/agent-accesses/${own.accessId}`,
      {
        name: 'x',
        kind: 'scripted',
        edge_id: own.edgeId,
        installation_id: own.installationId,
        project: '/x',
      },
    ],
    ['DELETE', `/api/v1/agent-accesses/${own.accessId}`, undefined],
    [
      'GET',
      `/api/v1/sessions/${own.sessionId}/history?edge_id=${own.edgeId}&access_id=${own.accessId}`,
      undefined,
    ],
    [
      'GET',
      `/api/v1/sessions/${own.sessionId}/events?edge_id=${own.edgeId}&access_id=${own.accessId}`,
      undefined,
    ],
    ...EDGE_AGENT_ACTIONS.map((action): [string, string, unknown] => [
      'POST',
      '/api/v1/edge-agents',
      request(action, alicesIds()),
    ]),
  ];

  it.each(badTokens)('%s is 401 on every route and changes nothing', async (_, make) => {
    const client = alice.withToken(await make());
    for (const [method, path, body] of routes()) {
      const reply = await client.call(method, path, body);
      expect({ method, path, status: reply.status }).toEqual({ method, path, status: 401 });
    }
    const accesses = await alice.call<{ items: { id: string; name: string }[] }>(
      'GET',
      '/api/v1/agent-accesses',
    );
    expect(accesses.body.data?.items.find((access) => access.id === own.accessId)?.name).toBe('suite');
  });
});

describe('a grant that ends while a call waits', () => {
  it('a watch whose token expires during the wait is answered 401, with no snapshot', async () => {
    const shortLived = alice.withToken(await token(ALICE, { expiresAt: Math.floor(Date.now() / 1000) + 2 }));
    const base = { edge_id: own.edgeId, access_id: own.accessId, session_id: own.sessionId };
    const poll = await alice.agent<Snapshot>({ ...base, action: 'poll' });
    const reply = await act(shortLived, { ...base, action: 'watch', cursor: String(poll.revision ?? 0) });
    expect(reply.status).toBe(401);
    expect(reply.body.data).toBeUndefined();
  });

  it('a watch whose access is deleted during the wait is answered 404, with no snapshot', async () => {
    const doomed = await startSession(alice, own.edgeId, e2e.projectDir);
    const base = { edge_id: doomed.edgeId, access_id: doomed.accessId, session_id: doomed.sessionId };
    const stopLater = { ...base, action: 'stop' };
    const waiting = act(alice, { ...base, action: 'watch', cursor: String(doomed.revision) });
    await new Promise((done) => setTimeout(done, 500));
    expect((await alice.call('DELETE', `/api/v1/agent-accesses/${doomed.accessId}`)).status).toBe(200);
    const reply = await waiting;
    expect(reply.status).toBe(404);
    expect(reply.body.data).toBeUndefined();
    // The session itself outlives its access on the edge until its lease ends; free its slot.
    await act(alice, stopLater);
  });

  it('an SSE stream whose token expires is closed at its next re-check', async () => {
    const shortLived = await token(ALICE, { expiresAt: Math.floor(Date.now() / 1000) + 2 });
    const url = `${e2e.stack.apiUrl}/api/v1/sessions/${own.sessionId}/events?edge_id=${own.edgeId}&access_id=${own.accessId}`;
    const response = await fetch(url, { headers: { authorization: `Bearer ${shortLived}` } });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    // The stream must end by itself (re-check every TETHER_SSE_REAUTHORIZE_MS); bounded by the test timeout.
    const ended = await eventually(
      async () => {
        const chunk = await reader.read();
        return chunk.done ? true : undefined;
      },
      'the SSE stream closing after its token expired',
      { timeoutMs: 120_000 },
    );
    expect(ended).toBe(true);
  });
});

describe('the owner', () => {
  it.each(EDGE_AGENT_ACTIONS.filter((action) => !DESTRUCTIVE.has(action)).map((action) => [action]))(
    '%s gets through (a contract answer, never an HTTP refusal)',
    async (action) => {
      const reply = await act(alice, request(action, alicesIds()));
      expect({ action, status: reply.status }).toEqual({ action, status: 200 });
      const started = reply.body.data as unknown as Snapshot;
      if (action === 'start' && started.session_id) {
        await alice.agent({ ...request('stop', alicesIds()), session_id: started.session_id });
      }
    },
  );

  it.each([...DESTRUCTIVE].map((action) => [action]))(
    '%s gets through on a session of its own',
    async (action) => {
      const session = await startSession(alice, own.edgeId, e2e.projectDir);
      const ids = { ...alicesIds(), access: session.accessId, session: session.sessionId };
      const reply = await act(alice, request(action as EdgeAgentAction, ids));
      expect(reply.status).toBe(200);
      // `stop` answers `session_closed` on success, as the contract says.
      expect(['ok', 'session_closed']).toContain((reply.body.data as unknown as Snapshot).status);
    },
  );
});
