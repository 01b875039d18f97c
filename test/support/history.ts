// Boots the history service in-process against the shared NATS and a fresh database, and talks
// to it only over NATS, as the api and the router do. Database reads are for assertions only.
import { randomBytes } from 'node:crypto';
import type { INestMicroservice } from '@nestjs/common';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import {
  Limits,
  Subjects,
  type EdgeAgentResult,
  type JournalEntry,
  type JournalMessage,
  type RequestMap,
  type RequestName,
  type RequestOf,
  type Submission,
  type JournalSubmissionEntry,
} from '#contracts';
import { connectNats, encodeJson, requestService } from '#messaging';
import {
  createTestDatabase,
  testServices,
  uniqueNamespace,
  type TestDatabase,
  TEST_JOURNAL_KEY,
  testJournalCipher,
  TEST_EDGE_SECRET,
} from '#test-support';
import { startHistory } from '../../apps/history/src/app.js';
import { loadHistoryConfig } from '../../apps/history/src/config.js';

/** How long a test waits for the journal consumer to catch up; generous for a loaded CI box. */
const CATCH_UP_TIMEOUT_MS = 15_000;
const CATCH_UP_POLL_MS = 50;

/** Booting (database + migrations + Nest) and tearing down can take seconds on a busy machine. */
export const HARNESS_TIMEOUT_MS = 60_000;
/** For tests that wait for the journal consumer or make many requests. */
export const SLOW_TEST_TIMEOUT_MS = 30_000;

export const HISTORY_KEY = 'history-test-at-rest-key-0123456789abcdef';

export interface HistoryHarness {
  /** The running service, for tests that drive one of its providers directly. */
  app: INestMicroservice;
  subjects: Subjects;
  nc: NatsConnection;
  db: pg.Client;
  call<N extends RequestName>(name: N, payload: RequestOf<N>): Promise<RequestMap[N][1]>;
  /** Publishes raw bytes to a session's journal; returns the stream sequence. */
  publishRaw(sessionId: string, data: Uint8Array): Promise<number>;
  /** A message as the router stores it: an edge update's snapshot sealed with the journal key. */
  encode(message: JournalMessage | Record<string, unknown>): Uint8Array;
  /** Publishes a message as the router would (sealed); returns the stream sequence. */
  publishEntry(entry: JournalMessage): Promise<number>;
  /** Resolves once the history consumer has acked (or terminated) every message up to `seq`. */
  caughtUp(seq: number): Promise<void>;
  /** Enrolls an edge for `actorId` and saves an access of `kind` to it. */
  enroll(actorId: string, kind?: string): Promise<{ edgeId: string; accessId: string }>;
  close(): Promise<void>;
}

export function sessionId(): string {
  return randomBytes(16).toString('hex');
}

/** Whose journal a test row is in. */
export interface RowScope {
  actorId: string;
  edgeId: string;
  accessId?: string;
  sessionId: string;
}

/** Where a row stands in its session's journal. */
export interface RowPlace {
  epoch: string;
  revision: number;
  recordedAt: number;
}

/** An edge update row whose snapshot holds `snapshot`'s fields and no messages or activities besides. */
export function updateRow(
  scope: RowScope,
  place: RowPlace,
  snapshot: Partial<EdgeAgentResult>,
): JournalEntry {
  const entry = { ...journalEntry(scope, place.revision, {}, place.recordedAt), epoch: place.epoch };
  entry.snapshot = { ...entry.snapshot, messages: [], activities: [], ...snapshot };
  return entry;
}

/** A router-written submission row (at the head's revision; sequence and chain link set by the publisher). */
export function submissionRow(
  scope: RowScope,
  place: RowPlace,
  submission: Submission,
): JournalSubmissionEntry {
  const row: JournalSubmissionEntry = {
    v: 1,
    kind: 'submission',
    session_id: scope.sessionId,
    edge_id: scope.edgeId,
    actor_id: scope.actorId,
    epoch: place.epoch,
    revision: Math.max(place.revision, 1),
    sequence: 0,
    prev_stream_seq: 0,
    fence: submission.fence,
    submission,
    recorded_at: place.recordedAt,
  };
  if (scope.accessId) row.access_id = scope.accessId;
  return row;
}

export function journalEntry(
  scope: { actorId: string; edgeId: string; accessId?: string; sessionId: string },
  revision: number,
  snapshot: Partial<EdgeAgentResult> = {},
  recordedAt = Date.now(),
): JournalEntry {
  const entry: JournalEntry = {
    v: 1,
    session_id: scope.sessionId,
    edge_id: scope.edgeId,
    actor_id: scope.actorId,
    epoch: 'e1',
    revision,
    snapshot: {
      version: 1,
      status: 'ok',
      session_id: scope.sessionId,
      revision,
      title: `Title at ${revision}`,
      project: '/home/dev/project',
      thread_id: 'thread-1',
      running: false,
      closed: false,
      messages: [{ role: 'user', text: `message ${revision}` }],
      models: [{ id: 'gpt-test' }],
      approvals: [{ id: 'approval-1', command: 'ls' }],
      ...snapshot,
    },
    emitted_at: recordedAt,
    recorded_at: recordedAt,
  };
  if (scope.accessId) entry.access_id = scope.accessId;
  return entry;
}

export async function startHarness(label: string): Promise<HistoryHarness> {
  const services = await testServices();
  const database: TestDatabase = await createTestDatabase(label);
  const namespace = uniqueNamespace(label);
  const subjects = new Subjects(namespace);
  const config = loadHistoryConfig({
    TETHER_NATS_URL: services.natsUrl,
    TETHER_NAMESPACE: namespace,
    TETHER_DATABASE_URL: database.url,
    TETHER_EDGE_SECRET: TEST_EDGE_SECRET,
    TETHER_JOURNAL_KEY: TEST_JOURNAL_KEY,
    TETHER_HISTORY_KEY: HISTORY_KEY,
    TETHER_LOG_LEVEL: 'warn',
  });
  let app: INestMicroservice | undefined;
  let nc: NatsConnection | undefined;
  const db = new pg.Client({ connectionString: database.url });
  try {
    app = await startHistory(config);
    nc = await connectNats({ servers: services.natsUrl, name: `test-${label}` });
    await db.connect();
  } catch (error) {
    await app?.close();
    await nc?.close();
    await db.end().catch(() => undefined);
    await database.drop();
    throw error;
  }
  const client = nc;
  const running = app;
  const js = jetstream(client);
  const jsm = await jetstreamManager(client);
  let published = 0;
  const cipher = testJournalCipher();
  const encode = (message: JournalMessage | Record<string, unknown>): Uint8Array =>
    encodeJson('snapshot' in message ? cipher.seal(message as JournalEntry) : message);
  const publishRaw = async (session: string, data: Uint8Array): Promise<number> => {
    // A fresh message id each time: JetStream's duplicate window must not hide a redelivery
    // the test means to make.
    const ack = await js.publish(subjects.sessionJournal(session), data, {
      msgID: `m${++published}-${sessionId()}`,
    });
    return ack.seq;
  };

  const call: HistoryHarness['call'] = (name, payload) =>
    requestService(client, subjects, name, payload, { timeoutMs: Limits.HISTORY_RPC_TIMEOUT_MS });

  return {
    app: running,
    subjects,
    nc: client,
    db,
    call,
    publishRaw,
    encode,
    publishEntry: (entry) => publishRaw(entry.session_id, encode(entry)),
    async caughtUp(seq) {
      const deadline = Date.now() + CATCH_UP_TIMEOUT_MS;
      for (;;) {
        const info = await jsm.consumers.info(subjects.sessionsStream, subjects.historyJournalConsumer);
        // Everything up to seq delivered and nothing awaiting an ack (terminated messages do not
        // always move the ack floor, so it is not the measure).
        if (info.delivered.stream_seq >= seq && info.num_ack_pending === 0 && info.num_pending === 0) return;
        if (Date.now() > deadline) {
          throw new Error(`History consumer did not reach stream sequence ${seq}: ${JSON.stringify(info)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, CATCH_UP_POLL_MS));
      }
    },
    async enroll(actorId, kind = 'scripted') {
      const edgeId = (await call('historyConnectorEnroll', { actor_id: actorId, name: 'edge' })).connector.id;
      const access = { name: 'a', kind, edge_id: edgeId, installation_id: 'i1', project: '/p' };
      const accessId = (await call('historyAccessCreate', { actor_id: actorId, access })).access.id;
      return { edgeId, accessId };
    },
    async close() {
      await running.close();
      await jsm.streams.delete(subjects.sessionsStream).catch(() => undefined);
      await jsm.streams.delete(subjects.auditStream).catch(() => undefined);
      await client.close();
      await db.end();
      await database.drop();
    },
  };
}
