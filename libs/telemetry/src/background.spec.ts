// Background rounds are traces of their own, never children of the request that was active when
// their timer was set.
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { traceBackground } from './background.js';

// Read once by background.ts on first use: tracing configured, every round sampled.
process.env.OTEL_TRACES_EXPORTER = 'otlp';
process.env.TETHER_TRACE_BACKGROUND_RATIO = '1';

const exporter = new InMemorySpanExporter();

const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
});

afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
});

test('a round started inside a request is a root span of its own trace, and its work nests under it', async () => {
  const tracer = trace.getTracer('spec');
  const request = tracer.startSpan('request');
  await context.with(trace.setSpan(context.active(), request), () =>
    traceBackground('router.lease-reaper', () => {
      tracer.startSpan('redis').end();
      return Promise.resolve();
    }),
  );
  request.end();
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  const round = spans.find((span) => span.name === 'router.lease-reaper')!;
  const work = spans.find((span) => span.name === 'redis')!;
  expect(round.parentSpanContext).toBeUndefined();
  expect(round.spanContext().traceId).not.toBe(request.spanContext().traceId);
  expect(work.parentSpanContext?.spanId).toBe(round.spanContext().spanId);
});

test('a failing round marks its span and rethrows', async () => {
  await expect(
    traceBackground('history.journal-compaction', () => Promise.reject(new TypeError('boom'))),
  ).rejects.toThrow('boom');
  await provider.forceFlush();
  const span = exporter
    .getFinishedSpans()
    .find((candidate) => candidate.name === 'history.journal-compaction')!;
  expect(span.status.code).toBe(2);
});
