// The messaging span conventions: PRODUCER `send`, CONSUMER `process` as its child through the
// headers, one linked span for a batch, and unsampled contexts propagated as unsampled.
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ROOT_CONTEXT, SpanKind, TraceFlags, context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { traceHeaders, withIncomingTrace, withIncomingTraces, withSendSpan } from './trace-context.js';

// Read once by trace-context.ts on first use: tracing configured.
process.env.OTEL_TRACES_EXPORTER = 'otlp';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
});

afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

beforeEach(() => exporter.reset());

async function finished() {
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

async function send(subject: string): Promise<MsgHdrs> {
  let sent: MsgHdrs | undefined;
  await withSendSpan(subject, { messageId: 'm-1', bodySize: 12 }, (headers) => {
    sent = headers;
  });
  return sent!;
}

test('a send is a PRODUCER span whose context the headers carry; its handling a CONSUMER child', async () => {
  const headers = await send('tether.router.edge-agent');
  expect(headers.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  await withIncomingTrace({ subject: 'tether.router.edge-agent', headers }, () => Promise.resolve(), {
    group: 'router',
  });
  const spans = await finished();
  const producer = spans.find((span) => span.name === 'send router.edge-agent')!;
  const consumer = spans.find((span) => span.name === 'process router.edge-agent')!;
  expect(producer.kind).toBe(SpanKind.PRODUCER);
  expect(producer.attributes).toMatchObject({
    'messaging.system': 'nats',
    'messaging.operation.name': 'send',
    'messaging.operation.type': 'send',
    'messaging.destination.name': 'tether.router.edge-agent',
    'messaging.destination.template': 'router.edge-agent',
    'messaging.message.id': 'm-1',
    'messaging.message.body.size': 12,
  });
  expect(consumer.kind).toBe(SpanKind.CONSUMER);
  expect(consumer.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
  expect(consumer.attributes).toMatchObject({
    'messaging.operation.name': 'process',
    'messaging.consumer.group.name': 'router',
  });
});

test('a batch is one CONSUMER span of its own trace, linked to every message it handles', async () => {
  const first = await send('tether.session.aaaa.journal');
  const second = await send('tether.session.bbbb.journal');
  await withIncomingTraces(
    [
      { subject: 'tether.session.aaaa.journal', headers: first },
      { subject: 'tether.session.bbbb.journal', headers: second },
    ],
    () => Promise.resolve(),
    { group: 'history-journal' },
  );
  const spans = await finished();
  const sends = spans.filter((span) => span.name === 'send session.*.journal');
  const batch = spans.find((span) => span.name === 'process session.*.journal')!;
  expect(batch.parentSpanContext).toBeUndefined();
  expect(batch.attributes['messaging.batch.message_count']).toBe(2);
  expect(batch.attributes['messaging.destination.name']).toBe('session.*.journal');
  expect(batch.links.map((link) => link.context.spanId).sort()).toEqual(
    sends.map((span) => span.spanContext().spanId).sort(),
  );
});

test('a failed send is marked with its error type and rethrown', async () => {
  await expect(
    withSendSpan('tether.history.sessions', { errorType: () => 'timeout' }, () =>
      Promise.reject(new Error('x')),
    ),
  ).rejects.toThrow('x');
  const [span] = await finished();
  expect(span!.attributes['error.type']).toBe('timeout');
  expect(span!.status.code).toBe(2);
});

test('an unsampled context is propagated as unsampled, so the receiver starts no trace', () => {
  const unsampled = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0123456789abcdef0123456789abcdef',
    spanId: '0123456789abcdef',
    traceFlags: TraceFlags.NONE,
  });
  const headers = traceHeaders(natsHeaders(), unsampled)!;
  expect(headers.get('traceparent')).toBe('00-0123456789abcdef0123456789abcdef-0123456789abcdef-00');
  expect(traceHeaders(undefined, ROOT_CONTEXT)).toBeUndefined();
});
