import { describe, expect, it } from '@jest/globals';
import type { Msg, NatsConnection, SubscriptionOptions } from '@nats-io/transport-node';
import { Subjects } from '#contracts';
import { NatsBus } from '#messaging';
import { SharedSubscriptions, UNPARSED } from './shared-subscriptions.js';

/** A connection that records subscriptions and lets the test deliver to them. */
function fakeBus() {
  const live = new Map<string, { callback: NonNullable<SubscriptionOptions['callback']>; open: boolean }>();
  let subscribes = 0;
  const nc = {
    subscribe(subject: string, options: SubscriptionOptions) {
      subscribes += 1;
      const entry = { callback: options.callback!, open: true };
      live.set(subject, entry);
      return { unsubscribe: () => (entry.open = false) };
    },
  } as unknown as NatsConnection;
  const deliver = (subject: string, body: string) => {
    const entry = live.get(subject);
    if (!entry?.open) throw new Error(`nobody listens on ${subject}`);
    const msg = { json: () => JSON.parse(body) as unknown } as unknown as Msg;
    void entry.callback(null, msg);
  };
  return {
    bus: new NatsBus(nc, new Subjects('t')),
    deliver,
    subscribes: () => subscribes,
    open: (subject: string) => live.get(subject)?.open ?? false,
  };
}

describe('SharedSubscriptions', () => {
  it('subscribes once per subject, parses each message once for every listener, and unsubscribes with the last', () => {
    const nats = fakeBus();
    const feeds = new SharedSubscriptions(nats.bus);
    const seen: unknown[][] = [[], []];
    const first = feeds.listen('t.session.a.committed', (message) => seen[0]!.push(message));
    const second = feeds.listen('t.session.a.committed', (message) => seen[1]!.push(message));
    expect(nats.subscribes()).toBe(1);

    nats.deliver('t.session.a.committed', '{"head":3}');
    expect(seen[0]).toEqual([{ head: 3 }]);
    // The very same parsed value: one parse for both streams.
    expect(seen[1]![0]).toBe(seen[0]![0]);

    first();
    expect(nats.open('t.session.a.committed')).toBe(true);
    second();
    expect(nats.open('t.session.a.committed')).toBe(false);
    expect(feeds.size).toBe(0);
    // Releasing twice changes nothing; a new listener subscribes afresh.
    second();
    feeds.listen('t.session.a.committed', () => undefined);
    expect(nats.subscribes()).toBe(2);
  });

  it('hands on a payload that is not JSON as UNPARSED, and a listener that throws stops no other', () => {
    const nats = fakeBus();
    const feeds = new SharedSubscriptions(nats.bus);
    const seen: unknown[] = [];
    feeds.listen('t.session.b.lifecycle', () => {
      throw new Error('broken listener');
    });
    feeds.listen('t.session.b.lifecycle', (message) => seen.push(message));
    nats.deliver('t.session.b.lifecycle', 'not json');
    nats.deliver('t.session.b.lifecycle', '{"type":"session.deleted"}');
    expect(seen).toEqual([UNPARSED, { type: 'session.deleted' }]);
    expect(nats.open('t.session.b.lifecycle')).toBe(true);
  });
});
