import { metrics, type Attributes, type Counter, type Histogram } from '@opentelemetry/api';
import { LATENCY_BUCKETS_S } from './buckets.js';

/**
 * The OpenTelemetry semantic-convention series that no instrumentation library makes for us:
 * messaging over NATS and JetStream (there is no NATS instrumentation) and the process's CPU and
 * memory. They are recorded whether or not traces are exported, so dashboards and alerts read the
 * same series on every deployment. HTTP (`http.server.request.duration`) and database
 * (`db.client.operation.duration`) come from the http and pg instrumentations (sdk.ts).
 */
export const STANDARD_METRIC = {
  messagingOperationDuration: 'messaging.client.operation.duration',
  messagingProcessDuration: 'messaging.process.duration',
  messagingSent: 'messaging.client.sent.messages',
  messagingConsumed: 'messaging.client.consumed.messages',
  processCpuTime: 'process.cpu.time',
  processMemoryUsage: 'process.memory.usage',
} as const;

const METER = 'tether.semconv';

/** `send` for a request or a publish, `process` for handling a delivered message. */
export type MessagingOperation = 'send' | 'process';

interface MessagingInstruments {
  operation: Histogram;
  process: Histogram;
  sent: Counter;
  consumed: Counter;
}

let instruments: MessagingInstruments | undefined;

function get(): MessagingInstruments {
  if (instruments) return instruments;
  const meter = metrics.getMeter(METER);
  const advice = { explicitBucketBoundaries: LATENCY_BUCKETS_S };
  instruments = {
    operation: meter.createHistogram(STANDARD_METRIC.messagingOperationDuration, {
      unit: 's',
      description: 'Duration of a NATS request or JetStream publish, until the reply or the ack.',
      advice,
    }),
    process: meter.createHistogram(STANDARD_METRIC.messagingProcessDuration, {
      unit: 's',
      description: 'Duration of handling one delivered NATS or JetStream message (or one batch).',
      advice,
    }),
    sent: meter.createCounter(STANDARD_METRIC.messagingSent, {
      unit: '{message}',
      description: 'Messages this process sent (requests and publishes).',
    }),
    consumed: meter.createCounter(STANDARD_METRIC.messagingConsumed, {
      unit: '{message}',
      description: 'Messages this process handled.',
    }),
  };
  return instruments;
}

/**
 * The semantic-convention attributes of a messaging measurement. `destination` must be the
 * low-cardinality subject template (`subjectLabel`), never a subject carrying ids.
 */
function attributesOf(operation: MessagingOperation, destination: string, errorType?: string): Attributes {
  return {
    'messaging.system': 'nats',
    'messaging.operation.name': operation,
    'messaging.operation.type': operation,
    'messaging.destination.name': destination,
    ...(errorType ? { 'error.type': errorType } : {}),
  };
}

/** One request or publish: its duration in ms, and the error type when it failed. */
export function recordMessagingSend(ms: number, destination: string, errorType?: string): void {
  const attributes = attributesOf('send', destination, errorType);
  const i = get();
  i.operation.record(ms / 1_000, attributes);
  i.sent.add(1, attributes);
}

/** One handled delivery (or a batch of `count`): its duration in ms and the error type if failed. */
export function recordMessagingProcess(ms: number, destination: string, count = 1, errorType?: string): void {
  const attributes = attributesOf('process', destination, errorType);
  const i = get();
  i.process.record(ms / 1_000, attributes);
  i.consumed.add(count, attributes);
}

/**
 * `process.cpu.time` (user and system seconds) and `process.memory.usage` (resident bytes), read
 * at scrape time. The V8 heap, GC and event-loop series come from instrumentation-runtime-node.
 */
export function registerProcessMetrics(): void {
  const meter = metrics.getMeter(METER);
  meter
    .createObservableCounter(STANDARD_METRIC.processCpuTime, {
      unit: 's',
      description: 'CPU time used by this process, by mode.',
    })
    .addCallback((result) => {
      const usage = process.cpuUsage();
      result.observe(usage.user / 1e6, { 'cpu.mode': 'user' });
      result.observe(usage.system / 1e6, { 'cpu.mode': 'system' });
    });
  meter
    .createObservableUpDownCounter(STANDARD_METRIC.processMemoryUsage, {
      unit: 'By',
      description: 'Resident memory of this process.',
    })
    .addCallback((result) => {
      result.observe(process.memoryUsage.rss());
    });
}
