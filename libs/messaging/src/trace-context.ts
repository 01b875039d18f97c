// W3C trace context (`traceparent`, `tracestate`) in NATS headers, so one HTTP call is one
// trace across api → router → edge → router → JetStream → history (ARCHITECTURE invariant 8).
// Only the OpenTelemetry API is used: without a started SDK every call here is a cheap no-op and
// no header is allocated.
import {
  context,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { loadTelemetryConfig } from '#telemetry';

const TRACER = 'tether.messaging';

let tracing: boolean | undefined;

/**
 * Whether this process collects spans. Without an exporter or OTLP endpoint the SDK still runs
 * (for metrics) with no span processor, and its sampler still records: every NATS message would
 * carry a `traceparent` and every request build two spans nobody reads — measurable CPU on the
 * poll hot path (B1 profile; measured on loopback: trace headers cost 20–30 % req/s). So
 * the hot path skips spans and headers altogether unless tracing is configured. Read once.
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
 * `existing` unchanged (often undefined: no allocation) when no sampled span is active.
 */
export function traceHeaders(existing?: MsgHdrs, active: Context = context.active()): MsgHdrs | undefined {
  if (!tracingEnabled()) return existing;
  const span = trace.getSpan(active);
  if (!span || !span.isRecording()) return existing;
  const carrier = existing ?? natsHeaders();
  propagation.inject(active, carrier, setter);
  return carrier;
}

/** The trace context a message carries (the active one when it carries none). */
export function traceContextOf(headers: MsgHdrs | undefined): Context {
  if (!headers) return context.active();
  return propagation.extract(context.active(), headers, getter);
}

/** A span around an outgoing request; `run` gets the span to end with the outcome. */
export function startClientSpan(name: string, subject: string): Span {
  return trace.getTracer(TRACER).startSpan(name, {
    kind: SpanKind.CLIENT,
    attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
  });
}

/**
 * Runs a handler for one incoming message as a child of the trace the message carries:
 * `kind` SERVER for request/reply, CONSUMER for JetStream deliveries. The span ends when the
 * handler settles; a thrown error marks it failed (the error message names no payload).
 */
export async function withIncomingTrace<T>(
  name: string,
  subject: string,
  headers: MsgHdrs | undefined,
  kind: 'server' | 'consumer',
  handler: () => Promise<T>,
): Promise<T> {
  if (!tracingEnabled()) return handler();
  const parent = traceContextOf(headers);
  const span = trace.getTracer(TRACER).startSpan(
    name,
    {
      kind: kind === 'server' ? SpanKind.SERVER : SpanKind.CONSUMER,
      attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), handler);
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).name });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Runs one piece of work that handles several messages at once (a batched write) so that every
 * message's trace still gets its hop: one span per message, each a child of its own publisher's
 * context, all covering the shared work, which runs under the first one's context (its database
 * spans land there). Without tracing this is `handler()`.
 */
export async function withIncomingTraces<T>(
  name: string,
  messages: readonly { subject: string; headers: MsgHdrs | undefined }[],
  handler: () => Promise<T>,
): Promise<T> {
  if (!tracingEnabled() || messages.length === 0) return handler();
  const tracer = trace.getTracer(TRACER);
  const spans = messages.map(({ subject, headers }) => {
    const parent = traceContextOf(headers);
    const span = tracer.startSpan(
      name,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'nats',
          'messaging.destination.name': subject,
          'messaging.batch.message_count': messages.length,
        },
      },
      parent,
    );
    return { parent, span };
  });
  const first = spans[0]!;
  try {
    return await context.with(trace.setSpan(first.parent, first.span), handler);
  } catch (error) {
    for (const { span } of spans)
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).name });
    throw error;
  } finally {
    for (const { span } of spans) span.end();
  }
}
