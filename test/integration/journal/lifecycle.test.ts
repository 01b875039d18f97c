// Lifecycle events for other services (docs/events.md) on a real router: a start → send → turn
// completes sequence produces its events after the journal rows, a retried update produces no
// second event, and a durable consumer stopped and restarted during traffic sees every event once.
import { jest } from '@jest/globals';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import {
  Subjects,
  edgeToken,
  lifecycleEventSchema,
  result,
  type EdgeAgentResult,
  type LifecycleEvent,
  type SessionUpdate,
} from '#contracts';
import { connectNats, decodeJson, ensureDurableConsumer, requestService } from '#messaging';
import { answerEdgeCredentials, testServices, uniqueNamespace, TEST_EDGE_SECRET } from '#test-support';
import type { RunningRouter } from '../../../apps/session-router/src/app.js';
import { startTestRouter } from '../../support/router.js';

const TIMEOUT_MS = 60_000;
jest.setTimeout(TIMEOUT_MS);

const EDGE = '4242';
const OWNER = 'lifecycle-owner';
const DURABLE = 'lifecycle-test-subscriber';
/** Short, so a message delivered to the stopped subscriber but never acked comes back quickly. */
const ACK_WAIT_NS = 2 * 1_000_000_000;
/** How long one pull waits for a message before the loop checks its deadline. */
const PULL_EXPIRES_MS = 1_000;
const COLLECT_DEADLINE_MS = 30_000;

const sid = (): string =>
  Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16)).join('');

describe('lifecycle events', () => {
  let namespace: string;
  let subjects: Subjects;
  let router: RunningRouter;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let redis: Redis;
  let natsUrl: string;

  beforeAll(async () => {
    const services = await testServices();
    natsUrl = services.natsUrl;
    namespace = uniqueNamespace('life');
    subjects = new Subjects(namespace);
    redis = new Redis(services.redisUrl);
    router = await startTestRouter({ natsUrl: natsUrl, redisUrl: services.redisUrl, namespace: namespace });
    nc = await connectNats({ servers: natsUrl, name: 'test-lifecycle' });
    // No history here: the edge counts as enrolled and never rotated.
    answerEdgeCredentials(nc, subjects);
    jsm = await jetstreamManager(nc);
    await ensureDurableConsumer(jsm, subjects.sessionsStream, DURABLE, {
      filter_subject: subjects.lifecycleWildcard,
      ack_wait: ACK_WAIT_NS,
    });
  }, TIMEOUT_MS);

  afterAll(async () => {
    await router?.close();
    await jsm?.streams.delete(subjects.sessionsStream).catch(() => undefined);
    await nc?.close();
    if (redis) {
      const keys = await redis.keys(`${namespace}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  }, TIMEOUT_MS);

  const send = async (session: string, revision: number, snapshot: Partial<EdgeAgentResult> = {}) =>
    requestService(
      nc,
      subjects,
      'routerSessionUpdate',
      {
        edge_id: EDGE,
        edge_token: edgeToken(TEST_EDGE_SECRET, EDGE),
        actor_id: OWNER,
        session_id: session,
        revision,
        emitted_at: Date.now(),
        snapshot: result('ok', { session_id: session, revision, ...snapshot }),
      } satisfies SessionUpdate,
      { timeoutMs: 10_000 },
    );

  /** Pulls from the durable consumer on its own connection, acking each event, until `done`. */
  async function subscriber(seen: LifecycleEvent[], done: () => boolean): Promise<void> {
    const connection = await connectNats({ servers: natsUrl, name: 'test-lifecycle-subscriber' });
    try {
      const consumer = await jetstream(connection).consumers.get(subjects.sessionsStream, DURABLE);
      const deadline = Date.now() + COLLECT_DEADLINE_MS;
      while (!done() && Date.now() < deadline) {
        const msg = await consumer.next({ expires: PULL_EXPIRES_MS });
        if (!msg) continue;
        const event = lifecycleEventSchema.parse(decodeJson(msg.data, msg.subject));
        // Counted only once JetStream confirmed the ack: that is what "seen" means to a service.
        if (await msg.ackAck()) seen.push(event);
      }
    } finally {
      await connection.close();
    }
  }

  it('derives events once per row, and a restarted durable consumer sees each exactly once', async () => {
    const a = sid();
    const b = sid();
    const seen: LifecycleEvent[] = [];

    // First subscriber: stops (closes its connection) after three events, while traffic flows.
    const first = subscriber(seen, () => seen.length >= 3);
    await send(a, 1);
    await send(a, 2, { running: true, messages: [{ role: 'user', text: 'hello' }] });
    await send(a, 3, { running: true, approvals: [{ id: 'p1', kind: 'command', command: 'ls /secret' }] });
    await send(a, 4, { running: true });
    const completed = { turn_timing: { dispatch_ms: 3, first_reply_ms: 10, finished_ms: 20 } };
    const ack5 = await send(a, 5, completed);
    // The edge retries the same update: acknowledged as a duplicate, no second event.
    const retry = await send(a, 5, completed);
    expect(retry).toMatchObject({
      ok: true,
      duplicate: true,
      sequence: (ack5 as { sequence: number }).sequence,
    });
    await send(a, 6, { closed: true });
    await first;

    // More traffic while no subscriber runs, then the restarted subscriber resumes.
    await send(b, 1, { running: true });
    await send(b, 2);
    const expectedTotal = 6 + 3;
    await subscriber(seen, () => seen.length >= expectedTotal);

    const ids = seen.map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(seen).toHaveLength(expectedTotal);
    const ofA = seen.filter((event) => event.session_id === a);
    expect(ofA.map((event) => event.type)).toEqual([
      'session.started',
      'turn.started',
      'approval.requested',
      'approval.resolved',
      'turn.completed',
      'session.closed',
    ]);
    expect(ofA.map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(ofA[2]?.data).toEqual({ approval_id: 'p1', approval_kind: 'command' });
    expect(ofA[4]?.data).toEqual({ status: 'ok', ...completed });
    expect(JSON.stringify(seen)).not.toMatch(/hello|secret/);
    expect(seen.filter((event) => event.session_id === b).map((event) => event.type)).toEqual([
      'session.started',
      'turn.started',
      'turn.completed',
    ]);

    // Nothing left behind: the durable consumer has no pending or unacked event.
    const info = await jsm.consumers.info(subjects.sessionsStream, DURABLE);
    expect(info.num_pending + info.num_ack_pending).toBe(0);
  });
});
