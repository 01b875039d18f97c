import {
  createInbox,
  errors,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';

/** What a request of the mux waits for: its reply, or the end of its time. */
interface Pending {
  subject: string;
  resolve: (msg: Msg) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** NATS's status for "nobody is subscribed to this subject" on a request with headers. */
const NO_RESPONDERS = 503;

/**
 * Request/reply over one inbox subscription, as the NATS client's own mux does, without what that
 * mux costs on every request: it allocates a timeout promise and a `Promise.race` per call, and
 * after each answered request it builds a `RequestError("cancelled")`, stack trace included, to
 * reject a promise that has already resolved. On the relay path (B1) that error alone was 2–4 % of
 * the api's and the router's busy time (docs/benchmarks.md "Where B1's CPU per poll goes").
 *
 * Failures are the client's own error classes (TimeoutError, NoRespondersError,
 * ClosedConnectionError), so callers map them as they would the client's request.
 *
 * Tokens count up from 1 under a random inbox: a responder learns its own reply subject, and the
 * identities' NATS permissions (`responses: { max: 1 }`, publish allow lists) keep it from
 * publishing to any other, so an unguessable token would add nothing the server does not enforce.
 */
export class RequestMux {
  private readonly base: string;
  private readonly pending = new Map<string, Pending>();
  private subscription: Subscription | undefined;
  private sequence = 0;

  constructor(
    private readonly nc: NatsConnection,
    inboxPrefix?: string,
  ) {
    this.base = `${createInbox(inboxPrefix)}.`;
    // A closed connection answers nobody: fail what is left at once instead of at each timeout.
    void nc.closed().then(() => this.failAll(new errors.ClosedConnectionError()));
  }

  /** Requests currently waiting for a reply. */
  get size(): number {
    return this.pending.size;
  }

  request(subject: string, data: Uint8Array, timeoutMs: number, headers?: MsgHdrs): Promise<Msg> {
    if (this.nc.isClosed()) return Promise.reject(new errors.ClosedConnectionError());
    if (this.nc.isDraining()) return Promise.reject(new errors.DrainingConnectionError());
    this.subscribe();
    const token = (++this.sequence).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => this.settle(token)?.reject(new errors.TimeoutError()), timeoutMs);
      this.pending.set(token, { subject, resolve, reject, timer });
      try {
        this.nc.publish(subject, data, { reply: this.base + token, headers });
      } catch (error) {
        this.settle(token);
        reject(error as Error);
      }
    });
  }

  /** The one subscription, made on first use; the client renews it after a reconnect. */
  private subscribe(): void {
    if (this.subscription && !this.subscription.isClosed()) return;
    const subscription = this.nc.subscribe(`${this.base}*`, {
      callback: (error, msg) => (error ? this.failAll(error) : this.deliver(msg)),
    });
    this.subscription = subscription;
    // A drained or refused subscription ends every request that waits on it.
    void subscription.closed.then(() => {
      if (this.subscription === subscription) this.subscription = undefined;
      this.failAll(new errors.ClosedConnectionError());
    });
  }

  private deliver(msg: Msg): void {
    const request = this.settle(msg.subject.slice(this.base.length));
    if (!request) return; // late: its request already timed out
    if (msg.data.length === 0 && msg.headers?.code === NO_RESPONDERS) {
      request.reject(new errors.NoRespondersError(request.subject));
    } else {
      request.resolve(msg);
    }
  }

  private settle(token: string): Pending | undefined {
    const request = this.pending.get(token);
    if (!request) return undefined;
    clearTimeout(request.timer);
    this.pending.delete(token);
    return request;
  }

  private failAll(error: Error): void {
    for (const token of [...this.pending.keys()]) this.settle(token)?.reject(error);
  }
}
