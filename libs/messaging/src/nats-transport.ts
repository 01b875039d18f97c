import { Logger } from '@nestjs/common';
import {
  BaseRpcContext,
  Server,
  type CustomTransportStrategy,
  type MessageHandler,
} from '@nestjs/microservices';
import type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/transport-node';
import { isObservable, lastValueFrom } from 'rxjs';
import type { Subjects } from '#contracts';
import { decodeJson, encodeJson, MalformedPayloadError } from './codec.js';
import { withIncomingTrace } from './trace-context.js';

/** What a handler may read besides the payload: the subject and the message headers. */
export class NatsRequestContext extends BaseRpcContext<[string, MsgHdrs | undefined]> {
  get subject(): string {
    return this.args[0];
  }
  get headers(): MsgHdrs | undefined {
    return this.args[1];
  }
}

export interface NatsTransportOptions {
  /** Queue group for every subscription of this service (docs/architecture.md: named after it). */
  queue: string;
  /** Resolves handler patterns, which are logical names (`RequestName` or `edgeHeartbeat`). */
  subjects: Subjects;
}

/** The subject a handler pattern stands for in this deployment's namespace. */
function subjectOf(subjects: Subjects, pattern: string): string {
  // Per-edge subjects: the service subscribes to all of them; the handler reads the edge id
  // from the subject (NatsRequestContext) and holds the payload to it.
  if (pattern === 'edgeHeartbeat') return subjects.edgeHeartbeat;
  if (pattern === 'routerSessionUpdate') return subjects.sessionUpdateWildcard;
  const subject = (subjects.requests as Record<string, string | undefined>)[pattern];
  if (!subject) throw new Error(`Unknown message pattern ${pattern}.`);
  return subject;
}

/**
 * A Nest microservice transport over a connection the service already owns. Each
 * `@MessagePattern(name)` (a logical name such as `routerEdgeAgent`) becomes one callback subscription in the service's queue group;
 * `@EventPattern` handlers get the same, without a reply. Payloads are plain JSON, matching the
 * contract, rather than Nest's own packet format, so non-Nest peers (edges, benchmarks) can talk
 * to the services.
 */
export class NatsTransport extends Server implements CustomTransportStrategy {
  private readonly log = new Logger(NatsTransport.name);
  private readonly subscriptions: Subscription[] = [];
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: NatsTransportOptions,
  ) {
    super();
  }

  listen(callback: () => void): void {
    for (const [pattern, handler] of this.getHandlers()) {
      const subject = subjectOf(this.options.subjects, pattern);
      const subscription = this.nc.subscribe(subject, {
        queue: this.options.queue,
        callback: (error, msg) => {
          if (error) {
            this.log.error(`Subscription to ${subject} failed: ${error.message}`);
            return;
          }
          // A child of the caller's span: the trace context arrives in the message headers.
          this.track(
            withIncomingTrace(msg, () => this.dispatch(handler, msg), {
              group: this.options.queue,
              attributes: { 'tether.handler': pattern },
            }),
          );
        },
      });
      this.subscriptions.push(subscription);
    }
    // The server learns of these subscriptions only when the client flushes: until then a request
    // from another connection finds no responder. Listening (and so the service's start and its
    // readiness) completes once the server has them.
    this.nc.flush().then(callback, (error: unknown) => {
      this.log.error(`Flushing the subscriptions failed: ${(error as Error).message}`);
      callback();
    });
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  private async dispatch(handler: MessageHandler, msg: Msg): Promise<void> {
    let payload: unknown;
    try {
      payload = decodeJson(msg.data, msg.subject);
    } catch (error) {
      if (error instanceof MalformedPayloadError && msg.reply) {
        msg.respond(encodeJson({ error: { code: 'invalid_request', message: error.message } }));
      }
      return;
    }
    const context = new NatsRequestContext([msg.subject, msg.headers]);
    try {
      const output = await handler(payload, context);
      const value: unknown = isObservable(output) ? await lastValueFrom(output) : output;
      if (msg.reply && !handler.isEventHandler) msg.respond(encodeJson(value ?? null));
    } catch (error) {
      // The RpcErrorFilter turns handler errors into replies; reaching here means the filter
      // itself failed or the handler is an event handler. Never let it escape the callback.
      this.log.error(`Handler for ${msg.subject} failed: ${(error as Error).message}`);
      if (msg.reply && !handler.isEventHandler) {
        msg.respond(encodeJson({ error: { code: 'internal', message: 'internal error' } }));
      }
    }
  }

  /** Stop taking work and wait for in-flight handlers; the connection is closed by its owner. */
  async close(): Promise<void> {
    await Promise.allSettled(this.subscriptions.map((subscription) => subscription.drain()));
    this.subscriptions.length = 0;
    await Promise.allSettled([...this.inFlight]);
  }

  on(): never {
    throw new Error('NatsTransport does not emit events.');
  }

  unwrap<T>(): T {
    return this.nc as T;
  }
}
