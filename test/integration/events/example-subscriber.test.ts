// The example subscriber (examples/lifecycle-consumer.ts) against real JetStream: an event with
// fields added after it was written and an event of a type it does not know are both acked; the
// first is processed (its unknown fields ignored), the second skipped; no message is terminated
// and nothing is left to redeliver. It never creates the producer's stream.
import { jest } from '@jest/globals';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { Subjects, type LifecycleEvent } from '#contracts';
import { connectNats } from '#messaging';
import { testServices, uniqueNamespace } from '#test-support';
import {
  attachLifecycleConsumer,
  handleLifecycleMessage,
  StreamMissingError,
  type LifecycleConsumerSettings,
} from '../../../examples/lifecycle-consumer.js';

jest.setTimeout(60_000);

const SESSION = '0123456789abcdef0123456789abcdef';

function event(sequence: number, type: string, extra: Record<string, unknown> = {}) {
  return {
    v: 1,
    id: `${SESSION}:e1:${sequence}:${type}`,
    type,
    session_id: SESSION,
    edge_id: '42',
    actor_id: 'user-7',
    at: 1_767_225_600_000 + sequence,
    epoch: 'e1',
    sequence,
    data: { status: 'ok' },
    ...extra,
  };
}

let nc: NatsConnection;
let jsm: JetStreamManager;
let subjects: Subjects;
let settings: LifecycleConsumerSettings;
let terminated: Subscription;
const terminations: string[] = [];

beforeAll(async () => {
  const services = await testServices();
  nc = await connectNats({ servers: services.natsUrl, name: 'example-subscriber-test' });
  jsm = await jetstreamManager(nc);
  subjects = new Subjects(uniqueNamespace('evsub'));
  settings = {
    stream: subjects.sessionsStream,
    durable: 'example-test',
    filterSubject: subjects.lifecycleWildcard,
    ackWaitMs: 30_000,
    maxAckPending: 10,
  };
  // JetStream announces every term() of this consumer on an advisory subject.
  terminated = nc.subscribe(
    `$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.${settings.stream}.${settings.durable}`,
    {
      callback: (_error, msg) => {
        terminations.push(msg.string());
      },
    },
  );
});

afterAll(async () => {
  terminated?.unsubscribe();
  await jsm?.streams.delete(subjects.sessionsStream).catch(() => undefined);
  await nc?.drain();
});

test('without the producer stream the subscriber refuses to start and creates nothing', async () => {
  await expect(attachLifecycleConsumer(nc, settings)).rejects.toBeInstanceOf(StreamMissingError);
  await expect(jsm.streams.info(settings.stream)).rejects.toThrow(/not found/i);
});

test('an event with an extra field and one of an unknown type: both acked, the first processed', async () => {
  // The producer's stream (the router creates it in a running Tether).
  await jsm.streams.add({ name: subjects.sessionsStream, subjects: [subjects.lifecycleWildcard] });
  const js = jetstream(nc);
  const withExtra = event(1, 'turn.completed', {
    added_in_a_later_version: { anything: true },
    data: {
      status: 'ok',
      turn_timing: { dispatch_ms: 3, first_reply_ms: 9, finished_ms: 20 },
      cost_cents: 4,
    },
  });
  await js.publish(subjects.sessionLifecycle(SESSION), JSON.stringify(withExtra));
  await js.publish(subjects.sessionLifecycle(SESSION), JSON.stringify(event(2, 'session.paused')));

  const consumer = await attachLifecycleConsumer(nc, settings);
  const handled: LifecycleEvent[] = [];
  const lines: string[] = [];
  const outcomes = [];
  for (let i = 0; i < 2; i += 1) {
    const msg = await consumer.next({ expires: 10_000 });
    expect(msg).not.toBeNull();
    outcomes.push(
      await handleLifecycleMessage(
        msg!,
        (received) => {
          handled.push(received);
          return Promise.resolve();
        },
        (line) => lines.push(line),
      ),
    );
  }
  expect(outcomes).toEqual(['processed', 'skipped']);
  expect(handled).toHaveLength(1);
  expect(handled[0]!.type).toBe('turn.completed');
  expect(handled[0]!.data.turn_timing).toEqual({ dispatch_ms: 3, first_reply_ms: 9, finished_ms: 20 });
  // Unknown fields are ignored: the handler sees the v1 fields only.
  expect(handled[0]).not.toHaveProperty('added_in_a_later_version');
  expect(handled[0]!.data).not.toHaveProperty('cost_cents');
  expect(lines.join('\n')).toMatch(/unknown_type \(session\.paused\)/);

  // Both acked: nothing pending, nothing waiting for an ack, nothing redelivered, none terminated.
  const info = await jsm.consumers.info(settings.stream, settings.durable);
  expect(info.ack_floor.stream_seq).toBe(2);
  expect(info.num_ack_pending).toBe(0);
  expect(info.num_pending).toBe(0);
  expect(info.num_redelivered).toBe(0);
  await nc.flush();
  expect(terminations).toEqual([]);
  expect(await consumer.next({ expires: 1_000 })).toBeNull();
});

test('an event the handler fails on is redelivered, not lost or terminated', async () => {
  const js = jetstream(nc);
  await js.publish(subjects.sessionLifecycle(SESSION), JSON.stringify(event(3, 'turn.started')));
  const consumer = await attachLifecycleConsumer(nc, settings);
  const first = await consumer.next({ expires: 10_000 });
  const outcome = await handleLifecycleMessage(
    first!,
    () => Promise.reject(new Error('downstream unavailable')),
    () => undefined,
  );
  expect(outcome).toBe('retry');
  // Redelivered after the retry delay; handled this time.
  const again = await consumer.next({ expires: 20_000 });
  expect(again?.seq).toBe(first!.seq);
  expect(again!.info.redelivered).toBe(true);
  expect(
    await handleLifecycleMessage(
      again!,
      () => Promise.resolve(),
      () => undefined,
    ),
  ).toBe('processed');
  const info = await jsm.consumers.info(settings.stream, settings.durable);
  expect(info.num_ack_pending).toBe(0);
  expect(terminations).toEqual([]);
});
