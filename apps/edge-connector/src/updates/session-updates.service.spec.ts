import { Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { Subjects, result, type SessionUpdate } from '#contracts';
import { decodeJson, encodeJson, NatsBus } from '#messaging';
import type { EdgeConfig } from '../config.js';
import type { SessionChange } from '../sessions/sessions.service.js';
import { SessionUpdatesService } from './session-updates.service.js';

/** A NATS stand-in whose replies the test releases one at a time. */
class FakeNats {
  readonly sent: SessionUpdate[] = [];
  private readonly replies: ((ok: boolean) => void)[] = [];
  request(_subject: string, data: Uint8Array): Promise<{ data: Uint8Array }> {
    this.sent.push(decodeJson<SessionUpdate>(data));
    return new Promise((resolve) => {
      this.replies.push((ok) =>
        resolve({
          data: encodeJson(
            ok
              ? { ok: true, epoch: 'e', sequence: 1, duplicate: false }
              : { error: { code: 'unavailable', message: 'no' } },
          ),
        }),
      );
    });
  }
  /** Answers the oldest request waiting (or, `newest`, the last one sent). */
  async answer(ok: boolean, newest = false): Promise<void> {
    for (let i = 0; i < 200 && this.replies.length === 0; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 5));
    (newest ? this.replies.pop() : this.replies.shift())?.(ok);
    await new Promise((resolve) => setImmediate(resolve));
  }
  /** Waits (bounded) until `count` requests were sent. */
  async sentCount(count: number): Promise<number> {
    for (let i = 0; i < 400 && this.sent.length < count; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 5));
    return this.sent.length;
  }
}

const change = (revision: number): SessionChange => ({
  actor_id: '1',
  session_id: 's'.repeat(32),
  revision,
  snapshot: result('ok', { revision }),
  emitted_at: 1,
});

function setup() {
  const nats = new FakeNats();
  const config = { edgeId: '9', edgeToken: 'token' } as EdgeConfig;
  const service = new SessionUpdatesService(
    new NatsBus(nats as unknown as NatsConnection, new Subjects('tunit')),
    config,
  );
  return { nats, service };
}

describe('SessionUpdatesService', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('keeps one update in flight and sends only the newest state after it, in order', async () => {
    const { nats, service } = setup();
    let revision = 1;
    const latest = (): SessionChange => change(revision);
    service.changed('s', latest);
    for (revision = 2; revision <= 5; revision += 1) service.changed('s', latest);
    revision = 5;
    expect(nats.sent.map((update) => update.revision)).toEqual([1]);
    await nats.answer(true);
    expect(nats.sent.map((update) => update.revision)).toEqual([1, 5]);
    expect(nats.sent[1]).toMatchObject({ edge_id: '9', edge_token: 'token' });
    await nats.answer(true);
    expect(service.pending).toBe(0);
  });

  it('retries a refused update with the latest state until it is acked', async () => {
    const { nats, service } = setup();
    service.changed('s', () => change(7));
    await nats.answer(false);
    expect(service.pending).toBe(1);
    await nats.answer(true);
    expect(nats.sent.map((update) => update.revision)).toEqual([7, 7]);
    expect(await service.flush(1_000)).toBe(true);
    service.stop();
  });
});

describe('SessionUpdatesService.journaled', () => {
  beforeAll(() => Logger.overrideLogger(false));
  const id = 's'.repeat(32);

  it('is true for an acked revision or an older one, false for a newer one nothing carries', async () => {
    const { nats, service } = setup();
    service.changed(id, () => change(4));
    await nats.answer(true);
    await expect(service.journaled(id, 4, 0)).resolves.toBe(true);
    await expect(service.journaled(id, 3, 0)).resolves.toBe(true);
    await expect(service.journaled(id, 5, 1_000)).resolves.toBe(false);
    await expect(service.journaled('t'.repeat(32), 1, 1_000)).resolves.toBe(false);
  });

  it('waits for the update in flight and answers from its ack', async () => {
    const { nats, service } = setup();
    service.changed(id, () => change(7));
    const waiting = service.journaled(id, 7, 5_000);
    await nats.answer(true);
    await expect(waiting).resolves.toBe(true);

    service.changed(id, () => change(8));
    const refused = service.journaled(id, 8, 5_000);
    await nats.answer(false);
    // Not acked: the update is retried later, and the wait ends with the timeout, unconfirmed.
    await expect(service.journaled(id, 8, 50)).resolves.toBe(false);
    service.stop();
    await expect(refused).resolves.toBe(false);
  });

  it('asks again beside an update stuck in flight (a dead router replica) and counts that ack', async () => {
    const { nats, service } = setup();
    service.changed(id, () => change(9));
    expect(nats.sent).toHaveLength(1);
    // The first request is never answered; the wait sends the newest state once more.
    const waiting = service.journaled(id, 9, 5_000);
    await expect(nats.sentCount(2)).resolves.toBe(2);
    expect(nats.sent.map((update) => update.revision)).toEqual([9, 9]);
    await nats.answer(true, true);
    await expect(waiting).resolves.toBe(true);
    service.stop();
  });
});
