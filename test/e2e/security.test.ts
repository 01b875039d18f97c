// Attacks of issue 11 against the real chain (docs/security.md), each refused:
// - a raw NATS subscriber to the journal, and a reader of the stored stream, see no prompt or
//   agent text (markers), while history stores and serves all of it;
// - after Redis lost a session's keys, another enrolled edge with a valid token for its own id
//   cannot write into the session (as itself or in the owner's name); the session stays the
//   owner's, on her edge, and goes on;
// - one user opening 2,000 SSE streams gets the configured bound and 429 beyond it, while
//   another user is served;
// - a validly signed token whose `sub` holds a NUL byte is refused with 401 at the door;
// - calls refused for malformed ids (edge id "0", a 33-character or 200 KB session id,
//   session_id "null") are audited with what could be decoded.
import { jest } from '@jest/globals';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import pg from 'pg';
import { sealedJournalEntrySchema, type SessionUpdate } from '#contracts';
import { connectNats, decodeJson, RpcRemoteError, requestService } from '#messaging';
import {
  ApiClient,
  signToken,
  testServices,
  TEST_JWT_SECRET,
  type Snapshot,
  eventually,
  startSession,
} from '#test-support';
import { startE2eStack, withOutput, type E2eStack } from '../support/e2e-stack.js';
import { SseClient } from './sse-client.js';

jest.setTimeout(300_000);

const MARK = 'QZXSECRET';
const SETTLE_TIMEOUT_MS = 60_000;
/** The api's default bound (USER_LIMITS_DEFAULTS.userStreams); the suite runs with the defaults. */
const USER_STREAMS_MAX = 32;
const FLOOD_STREAMS = 2_000;
const FLOOD_CONCURRENCY = 100;

let e2e: E2eStack;
let nc: NatsConnection;
let redis: Redis;
let raw: Subscription;
const seenOnJournal: string[] = [];
const owner = `sec${Date.now() % 100000}`;
let edgeId: string;
let accessId: string;
let sessionId: string;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2esecurity',
    owner,
    script: { rules: [{ steps: [{ type: 'reply', text: `${MARK}-agent-output` }] }] },
  });
  const services = await testServices();
  nc = await connectNats({ servers: services.natsUrl, name: 'test-e2e-security' });
  redis = new Redis(services.redisUrl);
  // A raw subscriber with no credentials of any service: everything the journal carries in flight.
  raw = nc.subscribe(`${e2e.stack.subjects.namespace}.session.*.journal`, {
    callback: (_error, msg) => {
      seenOnJournal.push(Buffer.from(msg.data).toString('utf8'));
    },
  });
  edgeId = e2e.stack.edge!.id;
  ({ accessId, sessionId } = await startSession(e2e.owner, edgeId, e2e.projectDir, { name: 'security' }));
});

afterAll(async () => {
  raw?.unsubscribe();
  await jetstreamManager(nc)
    .then((jsm) => jsm.streams.delete(e2e.stack.subjects.sessionsStream))
    .catch(() => undefined);
  await nc?.close();
  await redis?.quit();
  await e2e?.close();
});

const until = <T>(probe: () => Promise<T | undefined>, what: string) =>
  eventually(probe, what, { timeoutMs: SETTLE_TIMEOUT_MS });

const base = () => ({ edge_id: edgeId, access_id: accessId, session_id: sessionId });
const query = () => `edge_id=${edgeId}&access_id=${accessId}`;

/** One prompt on the session, answered once the turn finished. */
async function turn(text: string): Promise<Snapshot> {
  expect((await e2e.owner.agent<Snapshot>({ ...base(), action: 'send', text })).status).toBe('ok');
  return until(async () => {
    const polled = await e2e.owner.agent<Snapshot>({ ...base(), action: 'poll' });
    return !polled.running && polled.messages?.at(-1)?.role === 'assistant' ? polled : undefined;
  }, `the turn of "${text}"`);
}

/** The session's transcript as history serves it (tail page, text of every item). */
async function served(): Promise<string> {
  const reply = await e2e.owner.call('GET', `/api/v1/sessions/${sessionId}/history?${query()}&limit=200`);
  expect(reply.status).toBe(200);
  return JSON.stringify(reply.body);
}

/** Every message the stream holds on this session's journal subject. */
async function storedJournal(): Promise<Uint8Array[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(e2e.stack.subjects.sessionsStream);
  const out: Uint8Array[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
    const message = await jsm.streams
      .getMessage(e2e.stack.subjects.sessionsStream, { seq })
      .catch(() => null);
    if (message?.subject === e2e.stack.subjects.sessionJournal(sessionId)) out.push(message.data);
  }
  return out;
}

it('keeps prompts and agent output off the journal in flight and at rest; history serves them', () =>
  withOutput(e2e.stack, async () => {
    await turn(`${MARK}-prompt-one`);
    await turn(`${MARK}-prompt-two`);
    const transcript = await until(async () => {
      const text = await served();
      return text.includes(`${MARK}-prompt-two`) && text.includes(`${MARK}-agent-output`) ? text : undefined;
    }, 'history serving the turns');
    expect(transcript).toContain(`${MARK}-prompt-one`);

    const stored = await storedJournal();
    expect(stored.length).toBeGreaterThan(0);
    expect(seenOnJournal.length).toBeGreaterThan(0);
    for (const text of [...seenOnJournal, ...stored.map((data) => Buffer.from(data).toString('utf8'))]) {
      expect(text).not.toContain(MARK);
    }
    // Every edge-update row is sealed; its ids stay readable for the sequencer.
    const rows = stored
      .map((data) => decodeJson<Record<string, unknown>>(data))
      .filter((row) => row['kind'] !== 'submission');
    expect(rows.every((row) => sealedJournalEntrySchema.safeParse(row).success)).toBe(true);
  }));

it('refuses another edge writing into the session after Redis lost its keys, and the owner goes on', () =>
  withOutput(e2e.stack, async () => {
    await turn(`${MARK}-before-the-loss`);
    // Mallory enrolls an edge of her own: a valid token, for her own edge id.
    const mallory = e2e.owner.withToken(await signToken(TEST_JWT_SECRET, `mal${owner}`));
    const enrolled = await mallory.call<{ env: Record<string, string> }>(
      'POST',
      '/api/v1/edge-agents/connectors',
      { name: 'intruder', device: 'intruder' },
    );
    expect(enrolled.status).toBe(200);
    const intruderEdge = enrolled.body.data!.env['TETHER_EDGE_ID']!;
    const intruderToken = enrolled.body.data!.env['TETHER_EDGE_TOKEN']!;
    expect(intruderEdge).not.toBe(edgeId);

    // Redis loses every key of the deployment (restart, eviction, expiry).
    const keys = await redis.keys(`${e2e.stack.subjects.namespace}:*`);
    if (keys.length > 0) await redis.del(...keys);

    const forged = (actor: string): SessionUpdate => ({
      edge_id: intruderEdge,
      edge_token: intruderToken,
      actor_id: actor,
      access_id: accessId,
      session_id: sessionId,
      revision: 10_000,
      emitted_at: Date.now(),
      snapshot: {
        version: 1,
        status: 'ok',
        session_id: sessionId,
        revision: 10_000,
        messages: [{ role: 'user', text: `${MARK}-intruder` }],
      },
    });
    for (const actor of [owner, `mal${owner}`]) {
      await expect(
        requestService(nc, e2e.stack.subjects, 'routerSessionUpdate', forged(actor), { timeoutMs: 15_000 }),
      ).rejects.toBeInstanceOf(RpcRemoteError);
    }

    // The session is intact for its owner: her edge goes on, nothing of the intruder is stored.
    const after = await turn(`${MARK}-after-the-loss`);
    expect(JSON.stringify(after.messages)).not.toContain(`${MARK}-intruder`);
    const transcript = await until(async () => {
      const text = await served();
      return text.includes(`${MARK}-after-the-loss`) ? text : undefined;
    }, 'history serving the turn after the loss');
    expect(transcript).not.toContain(`${MARK}-intruder`);
    const rows = (await storedJournal()).map((data) =>
      decodeJson<{ edge_id: string; actor_id: string }>(data),
    );
    expect(rows.filter((row) => row.edge_id !== edgeId || row.actor_id !== owner)).toEqual([]);
    expect(await redis.hgetall(`${e2e.stack.subjects.namespace}:{${sessionId}}:meta`)).toMatchObject({
      owner,
      edge: edgeId,
    });
  }));

it('bounds one user flooding SSE streams, refusing beyond the limit, while another user is served', () =>
  withOutput(e2e.stack, async () => {
    const token = await signToken(TEST_JWT_SECRET, owner);
    const url = `${e2e.stack.apiUrl}/api/v1/sessions/${sessionId}/events?${query()}`;
    const clients: SseClient[] = [];
    const statuses = new Map<number, number>();
    let retryAfterSeen = 0;
    let next = 0;
    const bob = e2e.owner.withToken(await signToken(TEST_JWT_SECRET, `bob${owner}`));
    const bobStatuses: number[] = [];
    await Promise.all(
      Array.from({ length: FLOOD_CONCURRENCY }, async (_, worker) => {
        while (next < FLOOD_STREAMS) {
          next += 1;
          const client = await SseClient.open(url, token);
          statuses.set(client.status!, (statuses.get(client.status!) ?? 0) + 1);
          if (client.status === 200) clients.push(client);
          else {
            if (client.status === 429) retryAfterSeen += 1;
            client.close();
          }
          // Another user, during the flood.
          if (worker === 0 && next % 100 === 0) {
            bobStatuses.push((await bob.call('GET', '/api/v1/edge-agents/connectors')).status);
          }
        }
      }),
    );
    expect(statuses.get(200)).toBe(USER_STREAMS_MAX);
    expect(statuses.get(429)).toBe(FLOOD_STREAMS - USER_STREAMS_MAX);
    expect(retryAfterSeen).toBe(FLOOD_STREAMS - USER_STREAMS_MAX);
    expect(bobStatuses.length).toBeGreaterThan(0);
    expect(bobStatuses.every((status) => status === 200)).toBe(true);
    // Closing streams gives their slots back.
    for (const client of clients.splice(0)) client.close();
    const reopened = await until(async () => {
      const client = await SseClient.open(url, token);
      if (client.status === 200) return client;
      client.close();
      return undefined;
    }, 'a stream slot to be free again');
    reopened.close();
  }));

it('refuses a validly signed token whose sub holds a NUL byte with 401, on every route', async () => {
  const nul = e2e.owner.withToken(await signToken(TEST_JWT_SECRET, `ali\u0000ce`));
  expect((await nul.call('GET', '/api/v1/edge-agents/connectors')).status).toBe(401);
  expect((await nul.call('POST', '/api/v1/edge-agents', { ...base(), action: 'poll' })).status).toBe(401);
  expect((await nul.call('GET', `/api/v1/sessions/${sessionId}/history?${query()}`)).status).toBe(401);
});

it('audits calls refused for malformed ids with what could be decoded', () =>
  withOutput(e2e.stack, async () => {
    const auditor = `aud${owner}`;
    const client = new ApiClient(e2e.stack.apiUrl, await signToken(TEST_JWT_SECRET, auditor));
    const bodies: Record<string, unknown>[] = [
      { edge_id: '0', action: 'send', access_id: accessId, session_id: sessionId, text: `${MARK}-x` },
      { edge_id: edgeId, action: 'poll', access_id: accessId, session_id: 's'.repeat(33) },
      { edge_id: edgeId, action: 'poll', access_id: accessId, session_id: 'n'.repeat(200_000) },
      { edge_id: edgeId, action: 'watch', access_id: accessId, session_id: 'null', cursor: '1' },
    ];
    for (const body of bodies) {
      expect((await client.call('POST', '/api/v1/edge-agents', body)).status).toBe(400);
    }
    const db = new pg.Client({ connectionString: e2e.database.url });
    await db.connect();
    try {
      const rows = await until(async () => {
        const result = await db.query<Record<string, unknown>>(
          'SELECT action, edge_id, session_id, access_id, status, success FROM audit_records WHERE actor_id = $1',
          [auditor],
        );
        return result.rows.length >= bodies.length ? result.rows : undefined;
      }, 'the audit records of the refused calls');
      const sorted = rows.map((row) => `${row['action']} ${row['edge_id']} ${row['session_id']}`).sort();
      expect(sorted).toEqual(
        [
          `send 0 ${sessionId}`,
          `poll ${edgeId} ${'s'.repeat(33)}`,
          // 200 KB cannot be stored as sent: recorded without it.
          `poll ${edgeId} null`,
          `watch ${edgeId} null`,
        ].sort(),
      );
      expect(rows.every((row) => row['status'] === 'http_400' && row['success'] === false)).toBe(true);
      expect(rows.every((row) => row['access_id'] === accessId)).toBe(true);
      expect(JSON.stringify(rows)).not.toContain(MARK);
    } finally {
      await db.end();
    }
  }));
