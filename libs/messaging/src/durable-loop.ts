import type { ConsumerMessages, ConsumerUpdateConfig, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { consumeDurable } from './jetstream.js';

/**
 * The pull loop of a consumer a service holds from boot to shutdown. `start` hands each message to
 * `each` in delivery order, one at a time; `stop` ends the pull and waits for the message in hand.
 * A message the client had already buffered when `stop` came is handed back (a plain nak), so
 * another replica takes it at once instead of after the consumer's ack wait. Once `stop` returns,
 * the server has seen the pull's unsubscribe (the connection is flushed), so a message published
 * after it cannot be delivered into the closed pull and sit out the ack wait.
 */
export class DurableLoop {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private nc: NatsConnection | undefined;

  /** Creates or updates the durable consumer, then runs its pull (see consumeDurable). */
  async consume(
    nc: NatsConnection,
    jsm: JetStreamManager,
    target: {
      stream: string;
      durable: string;
      settings: Partial<ConsumerUpdateConfig> & { max_ack_pending: number };
    },
    each: (msg: JsMsg) => Promise<void> | void,
  ): Promise<void> {
    this.nc = nc;
    this.start(await consumeDurable(nc, jsm, target.stream, target.durable, target.settings), each);
  }

  start(messages: ConsumerMessages, each: (msg: JsMsg) => Promise<void> | void): void {
    if (this.messages) throw new Error('DurableLoop started twice');
    this.messages = messages;
    this.loop = this.run(messages, each);
  }

  /** True when it stopped a running loop; false when there was none. */
  async stop(): Promise<boolean> {
    const messages = this.messages;
    this.messages = undefined;
    if (!messages) return false;
    await messages.close();
    // A closed connection has nothing left to deliver into the pull.
    await this.nc?.flush().catch(() => undefined);
    await this.loop;
    return true;
  }

  private async run(messages: ConsumerMessages, each: (msg: JsMsg) => Promise<void> | void): Promise<void> {
    for await (const msg of messages) {
      if (this.messages !== messages) {
        msg.nak();
        continue;
      }
      await each(msg);
    }
  }
}
