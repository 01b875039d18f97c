// The journal chain on a replicated sessions stream (a 3-node NATS cluster, 3 replicas): two
// router replicas appending to one session at the same moment must still form one chain, each
// row naming the previous one and taking the next sequence. On a replicated stream the server's
// expected-last-subject-sequence check alone does not hold under concurrent publishes (nats-server
// issue 4320, found here as a lost settlement row); the router's per-session append lock must.
import { jest } from '@jest/globals';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Subjects, type Submission } from '#contracts';
import { connectNats } from '#messaging';
import { testServices, uniqueNamespace } from '#test-support';
import type { RunningRouter } from '../../../apps/session-router/src/app.js';
import { JournalSequencerService } from '../../../apps/session-router/src/journal-sequencer/journal-sequencer.service.js';
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js';
import { startTestRouter } from '../../support/router.js';

jest.setTimeout(120_000);

const ROUNDS = 30;
let cluster: NatsCluster;
let nc: NatsConnection;
const routers: RunningRouter[] = [];
const namespace = uniqueNamespace('jrepl');
const subjects = new Subjects(namespace);

beforeAll(async () => {
  cluster = await startNatsCluster();
  nc = await connectNats({ servers: cluster.url, name: 'test-replicated-sequencer' });
  const services = await testServices();
  for (let i = 0; i < 2; i += 1) {
    routers.push(
      await startTestRouter(
        { natsUrl: cluster.url, redisUrl: services.redisUrl, namespace: namespace },
        { TETHER_JETSTREAM_REPLICAS: '3' },
      ),
    );
  }
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(routers.map((router) => router.close()));
  await nc?.close();
  await cluster?.stop();
}, 60_000);

function pending(id: number, replica: number): Submission {
  return {
    client_message_id: `${Date.now()}-${(id * 2 + replica).toString(16).padStart(32, '0')}`,
    fence: 1,
    payload_fingerprint: 'c'.repeat(64),
    dispatch_state: 'pending',
    submitted_at: Date.now(),
  };
}

/** Every message on the session's journal subject, in stream order. */
async function chainOf(sessionId: string): Promise<{ seq: number; prev: number; sequence: number }[]> {
  const js = jetstream(nc);
  const consumer = await js.consumers.get(subjects.sessionsStream, {
    filter_subjects: subjects.sessionJournal(sessionId),
  });
  const rows: { seq: number; prev: number; sequence: number }[] = [];
  const { state } = await (await jetstreamManager(nc)).streams.info(subjects.sessionsStream);
  while (rows.length === 0 || rows.at(-1)!.seq < state.last_seq) {
    const msg = await consumer.next({ expires: 2_000 });
    if (!msg) break;
    const entry = msg.json<{ prev_stream_seq: number; sequence: number }>();
    rows.push({ seq: msg.seq, prev: entry.prev_stream_seq, sequence: entry.sequence });
  }
  await consumer.delete().catch(() => undefined);
  return rows;
}

test('two replicas appending to one session at once form one chain: no row shares a predecessor', async () => {
  const services = routers.map((router) => router.app.get(JournalSequencerService));
  const scope = { session_id: 'f'.repeat(32), edge_id: '1', actor_id: 'owner', access_id: 'a'.repeat(32) };
  for (let round = 0; round < ROUNDS; round += 1) {
    await Promise.all(
      services.map((service, replica) => service.appendSubmission(scope, 1, pending(round, replica))),
    );
  }
  const chain = await chainOf(scope.session_id);
  expect(chain).toHaveLength(ROUNDS * services.length);
  chain.forEach((row, index) => {
    expect([row.prev, row.sequence]).toEqual(index === 0 ? [0, 1] : [chain[index - 1]!.seq, index + 1]);
  });
});
