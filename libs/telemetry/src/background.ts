import { randomBytes } from 'node:crypto';
import {
  ROOT_CONTEXT,
  SpanStatusCode,
  TraceFlags,
  context,
  trace,
  type Attributes,
  type Context,
} from '@opentelemetry/api';
import { loadTelemetryConfig } from './config.js';

const TRACER = 'tether.background';

let settings: { tracing: boolean; ratio: number } | undefined;

function read(): { tracing: boolean; ratio: number } {
  if (!settings) {
    const config = loadTelemetryConfig();
    settings = { tracing: !config.disabled && config.tracesConfigured, ratio: config.backgroundSampleRatio };
  }
  return settings;
}

/**
 * A context whose parent is a valid but unsampled span: every span the work starts (NATS sends,
 * Redis and pg calls) inherits "not sampled" through the parent-based sampler, and the
 * `traceparent` it sends says so, so the receiving service does not start a root trace either.
 */
function unsampled(): Context {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: randomBytes(16).toString('hex'),
    spanId: randomBytes(8).toString('hex'),
    traceFlags: TraceFlags.NONE,
  });
}

/**
 * Runs one round of background work (an edge heartbeat, a lease-reaper tick, a sweep, a
 * compaction) as a short trace of its own: never inside whatever request's context happened to
 * schedule the timer, and sampled by `TETHER_TRACE_BACKGROUND_RATIO` (default 0.01), so a
 * heartbeat every few seconds per edge does not flood the trace store. Without tracing it only
 * detaches the work from the caller's context.
 */
export async function traceBackground<T>(
  name: string,
  work: () => Promise<T>,
  attributes?: Attributes,
): Promise<T> {
  const { tracing, ratio } = read();
  if (!tracing) return context.with(ROOT_CONTEXT, work);
  if (ratio <= 0 || Math.random() >= ratio) return context.with(unsampled(), work);
  const span = trace.getTracer(TRACER).startSpan(name, { root: true, attributes }, ROOT_CONTEXT);
  try {
    return await context.with(trace.setSpan(ROOT_CONTEXT, span), work);
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).name });
    throw error;
  } finally {
    span.end();
  }
}
