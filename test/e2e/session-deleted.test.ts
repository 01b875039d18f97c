// `session.deleted` (docs/events.md) and the SSE `end` it triggers, on the real chain: a delete
// stores one event (ids only, at the journal head) and ends an open stream at once — the stack's
// grant re-check is set to ten minutes, so only the deletion can end it within the test; a second
// delete answers not_found and stores nothing; a discard announces the deletion too.
import { jest } from '@jest/globals';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { lifecycleEventSchema, sealedJournalEntrySchema, type LifecycleEvent } from '#contracts';
import { connectNats, decodeJson } from '#messaging';
import {
  signToken,
  testServices,
  TEST_JWT_SECRET,
  type Snapshot,
  createAccess,
  findInstallation,
  startOnAccess,
} from '#test-support';
import type { Stack } from '../../scripts/stack/launcher.js';
import { startE2eStack, untilInHistory, type E2eStack } from '../support/e2e-stack.js';
import { SseClient } from './sse-client.js';

jest.setTimeout(120_000);

/** Longer than the test: a stream that ends did not end at a re-check. */
const REAUTHORIZE_MS = 600_000;
/** Generous bound on an event that should follow at once. */
const EVENT_TIMEOUT_MS = 20_000;

let e2e: E2eStack;
let stack: Stack;
let nc: NatsConnection;
let jsm: JetStreamManager;
const owner = `del${Date.now() % 100000}`;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2edel',
    owner,
    stack: { extraEnv: { TETHER_SSE_REAUTHORIZE_MS: String(REAUTHORIZE_MS) } },
  });
  stack = e2e.stack;
  nc = await connectNats({ servers: (await testServices()).natsUrl, name: 'test-e2e-deleted' });
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  await jsm?.streams.delete(stack.subjects.sessionsStream).catch(() => undefined);
  await nc?.close();
  await e2e?.close();
});

/** Every lifecycle event stored for one session, in stream order (the suite's stream is small). */
async function lifecycleOf(sessionId: string): Promise<LifecycleEvent[]> {
  const subject = stack.subjects.sessionLifecycle(sessionId);
  const info = await jsm.streams.info(stack.subjects.sessionsStream);
  const events: LifecycleEvent[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
    const message = await jsm.streams.getMessage(stack.subjects.sessionsStream, { seq }).catch(() => null);
    if (message?.subject !== subject) continue;
    events.push(lifecycleEventSchema.parse(decodeJson(message.data, message.subject)));
  }
  return events;
}

/** The session's last journal row as JetStream holds it. */
async function journalHead(sessionId: string) {
  const message = await jsm.streams.getMessage(stack.subjects.sessionsStream, {
    last_by_subj: stack.subjects.sessionJournal(sessionId),
  });
  return sealedJournalEntrySchema.parse(decodeJson(message!.data, message!.subject));
}

it('announces a delete once, ends open streams at once, and announces a discard', async () => {
  try {
    await scenario();
  } catch (error) {
    console.log(stack.output().split('\n').slice(-60).join('\n'));
    throw error;
  }
});

async function scenario(): Promise<void> {
  const alice = e2e.owner;
  const token = await signToken(TEST_JWT_SECRET, owner);
  const edgeId = stack.edge!.id;
  const installation = await findInstallation(alice, edgeId);
  const access = { edgeId, installation, project: e2e.projectDir, name: 'deleted' };
  const accessId = await createAccess(alice, access);
  const start = async (): Promise<string> => {
    const { sessionId } = await startOnAccess(alice, { ...access, accessId });
    // The journal exists (and history has it) once the start's first row is stored.
    await untilInHistory(alice, sessionId, `edge_id=${edgeId}&access_id=${accessId}`, EVENT_TIMEOUT_MS);
    return sessionId;
  };

  // Deleted while a stream follows it.
  const deleted = await start();
  const base = { edge_id: edgeId, access_id: accessId, session_id: deleted };
  const sent = await alice.agent<Snapshot>({ ...base, action: 'send', text: 'something to delete' });
  expect(sent.status).toBe('ok');
  const stream = await SseClient.open(
    `${stack.apiUrl}/api/v1/sessions/${deleted}/events?edge_id=${edgeId}&access_id=${accessId}`,
    token,
  );
  expect(stream.status).toBe(200);
  await stream.until((c) => c.types().includes('snapshot'), 'the first snapshot', EVENT_TIMEOUT_MS);

  const reply = await alice.agent<Snapshot>({ ...base, action: 'delete' });
  expect(reply).toMatchObject({ status: 'ok' });
  await stream.until((c) => c.ended, 'the stream to close', EVENT_TIMEOUT_MS);
  expect(stream.types().at(-1)).toBe('end');

  // The event is stored before the delete is answered: exactly one, at the journal head.
  const events = await lifecycleOf(deleted);
  const announced = events.filter((event) => event.type === 'session.deleted');
  expect(announced).toHaveLength(1);
  const head = await journalHead(deleted);
  expect(announced[0]).toEqual({
    v: 1,
    id: `${deleted}:${head.epoch}:${head.sequence}:session.deleted`,
    type: 'session.deleted',
    session_id: deleted,
    edge_id: edgeId,
    actor_id: owner,
    access_id: accessId,
    at: expect.any(Number),
    epoch: head.epoch,
    sequence: head.sequence,
    data: {},
  });
  expect(JSON.stringify(announced)).not.toMatch(/something to delete/);

  // A repeated delete finds the tombstone: not_found, and nothing more is stored.
  await expect(alice.agent<Snapshot>({ ...base, action: 'delete' })).resolves.toMatchObject({
    status: 'not_found',
  });
  const after = await lifecycleOf(deleted);
  expect(after.filter((event) => event.type === 'session.deleted')).toHaveLength(1);

  // A discarded (empty, idle) session leaves a tombstone and is announced the same way.
  const discarded = await start();
  const discardReply = await alice.agent<Snapshot>({
    edge_id: edgeId,
    access_id: accessId,
    session_id: discarded,
    action: 'discard',
  });
  expect(discardReply.status).toBe('ok');
  const ofDiscarded = await lifecycleOf(discarded);
  // The edge's own last row (the session closing) may come before or after it.
  expect(ofDiscarded[0]?.type).toBe('session.started');
  const discardAnnounced = ofDiscarded.filter((event) => event.type === 'session.deleted');
  expect(discardAnnounced).toHaveLength(1);
  expect(discardAnnounced[0]).toMatchObject({ session_id: discarded, access_id: accessId, data: {} });
}
