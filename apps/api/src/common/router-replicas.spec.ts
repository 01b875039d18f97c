import { jest } from '@jest/globals';
import type { Msg, NatsConnection, Status } from '@nats-io/transport-node';
import { Subjects } from '#contracts';
import { encodeJson, NatsBus } from '#messaging';
import { RouterReplicas } from './router-replicas.js';

const INSTANCE = 'a'.repeat(24);

/** A connection that delivers what the test publishes on the heartbeat subject, and its statuses. */
function fakeConnection() {
  let deliver: (data: Uint8Array) => void = () => undefined;
  const statuses: Status[] = [];
  let wake: () => void = () => undefined;
  const nc = {
    subscribe: (_subject: string, options: { callback: (error: Error | null, msg: Msg) => void }) => {
      deliver = (data) => options.callback(null, { data, subject: 'tether.router.heartbeat' } as Msg);
      return { unsubscribe: () => undefined };
    },
    status: () => ({
      async *[Symbol.asyncIterator]() {
        for (;;) {
          while (statuses.length > 0) yield statuses.shift()!;
          await new Promise<void>((resolve) => (wake = resolve));
        }
      },
    }),
  } as unknown as NatsConnection;
  return {
    bus: new NatsBus(nc, new Subjects()),
    beat: () => deliver(encodeJson({ instance: INSTANCE, interval_ms: 100 })),
    status: (type: string) => {
      statuses.push({ type } as Status);
      wake();
    },
  };
}

describe('RouterReplicas', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('resends what is in flight once a replica falls silent, but not while its own connection is down', async () => {
    const connection = fakeConnection();
    const replicas = new RouterReplicas(connection.bus);
    replicas.onModuleInit();
    let attempts = 0;
    void replicas.call(() => {
      attempts += 1;
      return new Promise<never>(() => undefined);
    }, 40_000);
    connection.beat();
    connection.status('disconnect');
    await jest.advanceTimersByTimeAsync(2_000);
    expect(attempts).toBe(1);

    connection.status('reconnect');
    await jest.advanceTimersByTimeAsync(250);
    // Silence is counted again from the reconnection: 3 intervals of 100 ms, checked every 250 ms.
    expect(attempts).toBe(1);
    await jest.advanceTimersByTimeAsync(250);
    expect(attempts).toBe(2);
    replicas.onApplicationShutdown();
  });
});
