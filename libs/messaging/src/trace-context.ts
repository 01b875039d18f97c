// W3C trace context (`traceparent`, `tracestate`) in NATS headers, so one HTTP call is one
// trace across api → router → edge → router → JetStream → history (docs/architecture.md invariant 8),
// with OpenTelemetry's messaging conventions: a PRODUCER span `send <subject>` for each request
// or publish, a CONSUMER span `process <subject>` for each handled delivery, links where one
// piece of work handles many. Only the OpenTelemetry API is used: without a started SDK every
// call here is a cheap no-op and no header is allocated. The messaging duration series are
// recorded whether or not traces are collected.
import {
  context,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { loadTelemetryConfig, recordMessagingProcess, recordMessagingSend, subjectLabel } from '#telemetry';

const TRACER = 'tether.messaging';

let tracing: boolean | undefined;

/**
 * Whether this process collects spans. Without an exporter or OTLP endpoint the SDK still runs
 * (for metrics) with no span processor and a sampler that records nothing; building spans and
 * `traceparent` headers nobody reads would still cost measurable CPU on the poll hot path (B1
 * profile; measured on loopback: trace headers cost 20–30 % req/s). So the hot path skips spans
 * and headers altogether unless tracing is configured. Read once.
 */
export function tracingEnabled(): boolean {
  if (tracing === undefined) {
    const config = loadTelemetryConfig();
    tracing = !config.disabled && config.tracesConfigured;
  }
  return tracing;
}

const setter: TextMapSetter<MsgHdrs> = {
  set(carrier, key, value) {
    carrier.set(key, value);
  },
};

const getter: TextMapGetter<MsgHdrs | undefined> = {
  get(carrier, key) {
    return carrier?.has(key) ? carrier.get(key) : undefined;
  },
  keys(carrier) {
    return carrier ? carrier.keys() : [];
  },
};

/**
 * Headers carrying the active trace context, merged into `existing` when given. Returns
 * `existing` unchanged (often undefined: no allocation) when no trace is active. An unsampled
 * context is sent too: the receiver's parent-based sampler then leaves it unsampled instead of
 * starting a root trace of its own.
 */
export function traceHeaders(existing?: MsgHdrs, active: Context = context.active()): MsgHdrs | undefined {
  if (!tracingEnabled()) return existing;
  const span = trace.getSpan(active);
  if (!span || !trace.isSpanContextValid(span.spanContext())) return existing;
  const carrier = existing ?? natsHeaders();
  propagation.inject(active, carrier, setter);
  return carrier;
}

/** The trace context a message carries (the active one when it carries none). */
export function traceContextOf(headers: MsgHdrs | undefined): Context {
  if (!headers) return context.active();
  return propagation.extract(context.active(), headers, getter);
}

/** The messaging attributes every NATS span carries. */
function messagingAttributes(operation: 'send' | 'process', subject: string, label: string): Attributes {
  return {
    'messaging.system': 'nats',
    'messaging.operation.name': operation,
    'messaging.operation.type': operation,
    'messaging.destination.name': subject,
    'messaging.destination.template': label,
  };
}

function failed(span: Span | undefined, errorType: string): void {
  span?.setAttribute('error.type', errorType);
  span?.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
}

export interface SendOptions {
  /** Headers to send (the trace context is added to them). */
  headers?: MsgHdrs;
  /** The JetStream message id (`Nats-Msg-Id`), when the send has one. */
  messageId?: string;
  bodySize?: number;
  /** The low-cardinality `error.type` of a failure (default: the error's name). */
  errorType?: (error: unknown) => string;
}

/**
 * One request or publish on `subject`: a PRODUCER span `send <subject template>` whose context
 * rides in the headers `run` must send, and the `messaging.client.operation.duration` series. `run`
 * may be synchronous (a core publish); a throw from it is recorded like a rejection.
 */
export async function withSendSpan<T>(
  subject: string,
  options: SendOptions,
  run: (headers: MsgHdrs | undefined) => T | Promise<T>,
): Promise<T> {
  const label = subjectLabel(subject);
  const span = tracingEnabled()
    ? trace.getTracer(TRACER).startSpan(`send ${label}`, {
        kind: SpanKind.PRODUCER,
        attributes: {
          ...messagingAttributes('send', subject, label),
          ...(options.messageId !== undefined ? { 'messaging.message.id': options.messageId } : {}),
          ...(options.bodySize !== undefined ? { 'messaging.message.body.size': options.bodySize } : {}),
        },
      })
    : undefined;
  const started = performance.now();
  let errorType: string | undefined;
  try {
    const headers = span
      ? traceHeaders(options.headers, trace.setSpan(context.active(), span))
      : options.headers;
    return await run(headers);
  } catch (error) {
    errorType = options.errorType?.(error) ?? (error instanceof Error ? error.name : 'error');
    failed(span, errorType);
    throw error;
  } finally {
    recordMessagingSend(performance.now() - started, label, errorType);
    span?.end();
  }
}

/** A delivered message, as far as tracing needs it. */
export interface IncomingMessage {
  subject: string;
  headers?: MsgHdrs;
  data?: Uint8Array;
}

export interface ProcessOptions {
  /** The queue group or durable consumer name (`messaging.consumer.group.name`). */
  group?: string;
  /** Extra attributes (e.g. the contract action), never payload content. */
  attributes?: Attributes;
}

/**
 * Runs a handler for one delivered message as a CONSUMER span `process <subject template>`, a
 * child of the `send` span the message carries, and records `messaging.process.duration`. The
 * span ends when the handler settles; a thrown error marks it failed (by its name, no payload).
 */
export async function withIncomingTrace<T>(
  msg: IncomingMessage,
  handler: () => Promise<T>,
  options: ProcessOptions = {},
): Promise<T> {
  const label = subjectLabel(msg.subject);
  const started = performance.now();
  let errorType: string | undefined;
  let span: Span | undefined;
  try {
    if (!tracingEnabled()) return await handler();
    const parent = traceContextOf(msg.headers);
    span = trace
      .getTracer(TRACER)
      .startSpan(
        `process ${label}`,
        { kind: SpanKind.CONSUMER, attributes: processAttributes(msg, label, options) },
        parent,
      );
    return await context.with(trace.setSpan(parent, span), handler);
  } catch (error) {
    errorType = error instanceof Error ? error.name : 'error';
    failed(span, errorType);
    throw error;
  } finally {
    recordMessagingProcess(performance.now() - started, label, 1, errorType);
    span?.end();
  }
}

function processAttributes(msg: IncomingMessage, label: string, options: ProcessOptions): Attributes {
  return {
    ...messagingAttributes('process', msg.subject, label),
    ...(msg.data ? { 'messaging.message.body.size': msg.data.length } : {}),
    ...(options.group ? { 'messaging.consumer.group.name': options.group } : {}),
    ...options.attributes,
  };
}

/**
 * Runs one piece of work that handles several messages at once (a batched write) as one
 * CONSUMER span `process <subject template>` with a link to each message's `send` span, as the
 * messaging conventions have it for batches: the batch is a short trace of its own, and each
 * message's trace reaches it through the link. One message is `withIncomingTrace`.
 */
export async function withIncomingTraces<T>(
  messages: readonly IncomingMessage[],
  handler: () => Promise<T>,
  options: ProcessOptions = {},
): Promise<T> {
  const first = messages[0];
  if (!first) return handler();
  if (messages.length === 1) return withIncomingTrace(first, handler, options);
  const label = subjectLabel(first.subject);
  const started = performance.now();
  let errorType: string | undefined;
  let span: Span | undefined;
  try {
    if (!tracingEnabled()) return await handler();
    const links: Link[] = [];
    for (const msg of messages) {
      const linked = trace.getSpanContext(traceContextOf(msg.headers));
      if (linked && trace.isSpanContextValid(linked)) links.push({ context: linked });
    }
    span = trace.getTracer(TRACER).startSpan(`process ${label}`, {
      kind: SpanKind.CONSUMER,
      root: true,
      links,
      attributes: {
        // One subject when every message shares it, else the template (ids differ).
        ...processAttributes(
          { subject: messages.every((msg) => msg.subject === first.subject) ? first.subject : label },
          label,
          options,
        ),
        'messaging.batch.message_count': messages.length,
      },
    });
    return await context.with(trace.setSpan(context.active(), span), handler);
  } catch (error) {
    errorType = error instanceof Error ? error.name : 'error';
    failed(span, errorType);
    throw error;
  } finally {
    recordMessagingProcess(performance.now() - started, label, messages.length, errorType);
    span?.end();
  }
}
