// Property-based fuzzing of the running stack (fast-check, with shrinking): edge-agent requests
// broken in a known way, anything at all on every route, and a hostile edge's session updates.
// Properties: no 5xx, no process exits, and a refused request changes nothing (Redis keys, Postgres
// rows and the sessions stream compared before and after). Each property runs with a fixed seed
// and again with a random one, printed so a failure can be replayed: TETHER_FUZZ_SEED=<seed>.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import fc from 'fast-check';
import { edgeToken, type EdgeAgentAction } from '#contracts';
import { encodeJson, decodeJson } from '#messaging';
import {
  LIMITS_OFF_ENV,
  signToken,
  type ApiClient,
  TEST_JWT_SECRET,
  TEST_EDGE_SECRET,
  startSession,
  validRequest,
  watchUntil,
  type StartedSession,
} from '#test-support';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';
import {
  anyAction,
  breakage,
  breakRequest,
  hostileUpdate,
  rawRequest,
  type RawRequest,
} from '../support/fuzz-inputs.js';
import { StackState } from '../support/stack-state.js';
import { jest } from '@jest/globals';

jest.setTimeout(600_000);

const FIXED_SEED = 20_261_203;
const RANDOM_SEED = Number(process.env.TETHER_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** Cases per property and seed: 2 × (1,000 + 3,500 + 500) = 10,000 a run. */
const RUNS = { refused: 1_000, anything: 3_500, hostileEdge: 500 };
const SERVICES = ['history', 'router', 'api', 'edge'] as const;

const owner = `alice${Date.now() % 100_000}`;
let e2e: E2eStack;
let alice: ApiClient;
let aliceToken: string;
let session: StartedSession;
let redis: Redis;
let nc: NatsConnection;
let state: StackState;

beforeAll(async () => {
  console.log(
    `fuzz: fixed seed ${FIXED_SEED}, random seed ${RANDOM_SEED} (replay: TETHER_FUZZ_SEED=${RANDOM_SEED})`,
  );
  e2e = await startE2eStack({
    label: 'e2efuzz',
    owner,
    // Ten thousand requests from one user on purpose; the limits have their own suites.
    stack: { extraEnv: LIMITS_OFF_ENV },
  });
  alice = e2e.owner;
  aliceToken = await signToken(TEST_JWT_SECRET, owner);
  session = await startSession(alice, e2e.stack.edge!.id, e2e.projectDir);
  const base = { edge_id: session.edgeId, access_id: session.accessId, session_id: session.sessionId };
  await alice.agent({ ...base, action: 'send', text: 'hello' });
  await watchUntil(alice, base, session.revision, (s) => !s.running && (s.revision ?? 0) > session.revision);
  redis = new Redis(e2e.stack.options.redisUrl);
  nc = await connect({ servers: e2e.stack.options.natsUrl.split(',') });
  state = await StackState.open({
    redis,
    namespace: e2e.stack.subjects.namespace,
    databaseUrl: e2e.database.url,
    nc,
    sessionsStream: e2e.stack.subjects.sessionsStream,
  });
  // Let history catch up with the turn, so the fingerprint is still before the first case.
  await settled();
});

afterAll(async () => {
  await state?.close();
  await nc?.close();
  redis?.disconnect();
  await e2e?.close();
});

/** Fingerprints this long apart and all equal: nothing of the set-up is still in flight. */
const SETTLE_STEP_MS = 1_000;
const SETTLE_STEPS = 3;

/** Waits until the fingerprint stays the same for SETTLE_STEPS steps in a row. */
async function settled(): Promise<string> {
  let previous = await state.fingerprint();
  let same = 0;
  while (same < SETTLE_STEPS) {
    await new Promise((done) => setTimeout(done, SETTLE_STEP_MS));
    const current = await state.fingerprint();
    same = current === previous ? same + 1 : 0;
    previous = current;
  }
  return previous;
}

/** The stream sequence of the subject's last message: it moves only when a row is stored. */
async function lastJournalRow(subject: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const message = await jsm.streams.getMessage(e2e.stack.subjects.sessionsStream, { last_by_subj: subject });
  return message?.seq ?? 0;
}

function ids() {
  return {
    edge: session.edgeId,
    access: session.accessId,
    session: session.sessionId,
    approval: 'a'.repeat(32),
    input: 'b'.repeat(32),
    transfer: 'c'.repeat(32),
  };
}

async function send(raw: RawRequest): Promise<number> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${aliceToken}`,
  };
  if (raw.contentType) headers['content-type'] = raw.contentType;
  const response = await fetch(e2e.stack.apiUrl + raw.path, {
    method: raw.method,
    headers,
    body: raw.method === 'GET' || raw.method === 'HEAD' ? undefined : raw.body,
  });
  await response.arrayBuffer();
  return response.status;
}

function everyServiceRunning(): void {
  for (const name of SERVICES)
    expect({ name, running: e2e.stack.running(name) }).toEqual({ name, running: true });
}

describe.each([
  ['fixed', FIXED_SEED],
  ['random', RANDOM_SEED],
])('with the %s seed', (_, seed) => {
  it('refuses every broken edge-agent request and changes nothing', async () => {
    let before = await settled();
    await fc.assert(
      fc.asyncProperty(anyAction, breakage, async (action: EdgeAgentAction, broken) => {
        const body = breakRequest(
          validRequest(action, ids(), { installation: 'i'.repeat(32), project: e2e.projectDir }),
          broken,
        );
        const status = await send({
          method: 'POST',
          path: '/api/v1/edge-agents',
          contentType: 'application/json',
          body: JSON.stringify(body),
        });
        // 400, or 404 for an edge id that parses but names no connector of the caller's ("01" is 1).
        expect({ action, broken: broken.kind, refused: status === 400 || status === 404 }).toEqual({
          action,
          broken: broken.kind,
          refused: true,
        });
        const after = await state.fingerprint();
        expect(after).toBe(before);
        before = after;
      }),
      { seed, numRuns: RUNS.refused, endOnFailure: false },
    );
    everyServiceRunning();
  });

  it('answers anything on any route without a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(rawRequest, async (raw) => {
        const status = await send(raw);
        expect({ ...raw, body: raw.body?.slice(0, 200), status: status < 500 }).toEqual({
          ...raw,
          body: raw.body?.slice(0, 200),
          status: true,
        });
      }),
      { seed, numRuns: RUNS.anything },
    );
    everyServiceRunning();
    expect((await alice.agent({ edge_id: session.edgeId, action: 'discover' })).status).toBe('ok');
  });

  it("never stores a hostile edge's update to a session that is not its own, and keeps answering", async () => {
    // The intruder is an enrolled edge with a valid token for its own id.
    const enrolled = await alice.call<{ connector: { id: string }; edge_token: string }>(
      'POST',
      '/api/v1/edge-agents/connectors',
      { name: 'intruder', device: 'intruder' },
    );
    const intruder = enrolled.body.data!;
    const valid = {
      edge_id: intruder.connector.id,
      edge_token: intruder.edge_token,
      actor_id: 'mallory',
      access_id: session.accessId,
      session_id: session.sessionId,
      revision: 1_000_000,
      snapshot: {
        version: 1,
        status: 'ok',
        session_id: session.sessionId,
        revision: 1_000_000,
        messages: [{ role: 'assistant', text: 'forged' }],
      },
      emitted_at: Date.now(),
    };
    expect(edgeToken(TEST_EDGE_SECRET, intruder.connector.id)).toBe(intruder.edge_token);
    const journal = e2e.stack.subjects.sessionJournal(session.sessionId);
    await settled();
    const before = await lastJournalRow(journal);
    await fc.assert(
      fc.asyncProperty(hostileUpdate(valid), async (update) => {
        const reply = await nc.request(
          e2e.stack.subjects.sessionUpdateOf(intruder.connector.id),
          encodeJson(update),
          {
            timeout: 10_000,
          },
        );
        const answer = decodeJson<{ ok?: boolean; error?: unknown }>(reply.data, journal);
        // An update naming her session is never stored; one the mutation renamed to another id is
        // the intruder's own session, which an enrolled edge may start.
        if (update['session_id'] === session.sessionId) expect(answer.ok).not.toBe(true);
      }),
      { seed, numRuns: RUNS.hostileEdge },
    );
    expect(await lastJournalRow(journal)).toBe(before);
    everyServiceRunning();
  });
});
