// Streams as configuration on a real 3-node NATS cluster (issue 13): a missing stream is created
// with the configured replicas and limits; a stream an operator resized keeps its settings when
// the services ensure it again at boot; a stream that breaks an invariant fails the boot with a
// clear message and is left as it is; and a boot while JetStream has no quorum waits for it
// instead of failing at once. The services' own restarts are in test/e2e/nats-stream-settings.
import { jest } from '@jest/globals';
import { jetstreamManager, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Subjects } from '#contracts';
import { connectNats, ensureAuditStream, ensureSessionsStream, StreamConfigError } from '#messaging';
import { uniqueNamespace } from '#test-support';
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js';

jest.setTimeout(120_000);

const DAY_NS = 86_400 * 1e9;
const HOUR_NS = 3_600 * 1e9;
const settings = { replicas: 3, maxAgeMs: 14 * 86_400_000, maxBytes: 0, storage: 'file' as const };

let cluster: NatsCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  cluster = await startNatsCluster();
  nc = await connectNats({ servers: cluster.url, name: 'test-stream-settings' });
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  await nc?.close();
  await cluster?.stop();
});

test('creates a missing stream with the configured replicas, age, size and storage', async () => {
  const subjects = new Subjects(uniqueNamespace('jscreate'));
  await ensureSessionsStream(nc, subjects, { ...settings, maxBytes: 64 * 2 ** 20 });
  await ensureAuditStream(nc, subjects, { ...settings, maxAgeMs: 30 * 86_400_000 });
  const sessions = await jsm.streams.info(subjects.sessionsStream);
  expect(sessions.config).toMatchObject({
    num_replicas: 3,
    max_age: 14 * DAY_NS,
    max_bytes: 64 * 2 ** 20,
    storage: StorageType.File,
    subjects: [subjects.journalWildcard, subjects.lifecycleWildcard],
  });
  // Three servers hold it: a leader and two current replicas.
  expect(sessions.cluster?.leader).toBeDefined();
  expect(sessions.cluster?.replicas).toHaveLength(2);
  expect((await jsm.streams.info(subjects.auditStream)).config).toMatchObject({
    num_replicas: 3,
    max_age: 30 * DAY_NS,
    max_bytes: -1,
  });
});

test("keeps an operator's replicas, age and size when the stream is ensured again", async () => {
  const subjects = new Subjects(uniqueNamespace('jsresize'));
  await ensureSessionsStream(nc, subjects, settings);
  const { config } = await jsm.streams.info(subjects.sessionsStream);
  await jsm.streams.update(subjects.sessionsStream, {
    ...config,
    num_replicas: 1,
    max_age: HOUR_NS,
    max_bytes: 256 * 2 ** 20,
  });
  // Every service ensures it at boot, with the code's own (different) settings.
  for (let boot = 0; boot < 3; boot += 1) await ensureSessionsStream(nc, subjects, settings);
  const kept = (await jsm.streams.info(subjects.sessionsStream)).config;
  expect(kept).toMatchObject({ num_replicas: 1, max_age: HOUR_NS, max_bytes: 256 * 2 ** 20 });
  expect(kept).toEqual({ ...config, num_replicas: 1, max_age: HOUR_NS, max_bytes: 256 * 2 ** 20 });
});

test('fails with a clear message on a stream that breaks an invariant, and changes nothing', async () => {
  const subjects = new Subjects(uniqueNamespace('jsbroken'));
  await jsm.streams.add({
    name: subjects.sessionsStream,
    subjects: [subjects.lifecycleWildcard],
    num_replicas: 3,
  });
  const before = (await jsm.streams.info(subjects.sessionsStream)).config;
  const failure = ensureSessionsStream(nc, subjects, settings);
  await expect(failure).rejects.toBeInstanceOf(StreamConfigError);
  await expect(failure).rejects.toThrow(
    new RegExp(`${subjects.sessionsStream}.*subjects.*${subjects.journalWildcard.replace(/[.*>]/g, '\\$&')}`),
  );
  expect((await jsm.streams.info(subjects.sessionsStream)).config).toEqual(before);
});

test('a boot while JetStream has no quorum waits for it, then creates the stream', async () => {
  const subjects = new Subjects(uniqueNamespace('jsquorum'));
  // Two of three nodes gone: no meta leader can be elected, JetStream cannot answer.
  await cluster.kill(1);
  await cluster.kill(2);
  const single = await connectNats({ servers: cluster.urls[0]!, name: 'test-stream-settings-quorum' });
  try {
    let settled = false;
    const boot = ensureSessionsStream(single, subjects, settings).finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    // Still waiting, not failed.
    expect(settled).toBe(false);
    await cluster.restart(1);
    await cluster.restart(2);
    await boot;
    const created = await (await jetstreamManager(single)).streams.info(subjects.sessionsStream);
    expect(created.config.num_replicas).toBe(3);
  } finally {
    await single.close();
  }
});
