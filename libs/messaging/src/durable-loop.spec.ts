import { jest } from '@jest/globals';
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { DurableLoop } from './durable-loop.js';

interface FakeMsg {
  seq: number;
  nak: jest.Mock;
}

/** A pull that yields what `push` gives it until closed, like the client's buffered iterator. */
function fakePull(): { messages: ConsumerMessages; push(msg: FakeMsg): void; closed(): boolean } {
  const queue: FakeMsg[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  async function* iterate(): AsyncGenerator<FakeMsg> {
    for (;;) {
      const next = queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (closed) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }
  const messages = Object.assign(iterate(), {
    close: () => {
      closed = true;
      wake?.();
      return Promise.resolve(undefined);
    },
  }) as unknown as ConsumerMessages;
  return {
    messages,
    push: (msg) => {
      queue.push(msg);
      wake?.();
    },
    closed: () => closed,
  };
}

const msg = (seq: number): FakeMsg => ({ seq, nak: jest.fn() });

describe('DurableLoop', () => {
  it('hands messages over in order, the next only after the last one was handled', async () => {
    const pull = fakePull();
    const seen: string[] = [];
    const loop = new DurableLoop();
    loop.start(pull.messages, async (m: JsMsg) => {
      seen.push(`start ${m.seq}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.push(`end ${m.seq}`);
    });
    pull.push(msg(1));
    pull.push(msg(2));
    await new Promise((resolve) => setTimeout(resolve, 30));
    await loop.stop();
    expect(seen).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('on stop, finishes the message in hand and hands back what was buffered behind it', async () => {
    const pull = fakePull();
    const handled: number[] = [];
    let release!: () => void;
    const inHand = new Promise<void>((resolve) => (release = resolve));
    const loop = new DurableLoop();
    loop.start(pull.messages, async (m: JsMsg) => {
      handled.push(m.seq);
      if (m.seq === 1) await inHand;
    });
    const first = msg(1);
    const buffered = msg(2);
    pull.push(first);
    pull.push(buffered);
    await new Promise((resolve) => setImmediate(resolve));
    const stopped = loop.stop();
    let done = false;
    void stopped.then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(done).toBe(false);
    release();
    await expect(stopped).resolves.toBe(true);
    expect(pull.closed()).toBe(true);
    expect(handled).toEqual([1]);
    expect(buffered.nak).toHaveBeenCalledTimes(1);
    expect(first.nak).not.toHaveBeenCalled();
  });

  it('stops as a no-op when it never started, and refuses a second start', async () => {
    const loop = new DurableLoop();
    await expect(loop.stop()).resolves.toBe(false);
    loop.start(fakePull().messages, () => undefined);
    expect(() => loop.start(fakePull().messages, () => undefined)).toThrow('started twice');
    await loop.stop();
  });
});
