import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RuntimeNodeInstrumentation } from '@opentelemetry/instrumentation-runtime-node';
import {
  envDetector,
  hostDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
} from '@opentelemetry/resources';
import { AggregationType, type ViewOptions } from '@opentelemetry/sdk-metrics';
import { AlwaysOffSampler } from '@opentelemetry/sdk-trace';
import { PrismaInstrumentation } from '@prisma/instrumentation';
import { LATENCY_BUCKETS_S } from './buckets.js';
import { loadTelemetryConfig } from './config.js';
import { defaultServiceName } from './service-name.js';
import { setMetricsReader } from './reader.js';
import { untraced } from './untraced.js';
import { registerProcessMetrics } from './standard-metrics.js';

/**
 * Prisma's own spans that duplicate the pg instrumentation's one span per statement
 * (`prisma:client:db_query`) or only describe its engine's internals; `prisma:client:operation`
 * (one per model call) stays, the statements it ran nest under it as pg spans.
 */
const PRISMA_SPANS_IGNORED = [/^prisma:client:db_query$/, /^prisma:client:serialize$/, /^prisma:engine:/];

/** The standard histograms get Tether's latency buckets (1 ms – 15 s) instead of the library's. */
const STANDARD_HISTOGRAMS = [
  'http.server.request.duration',
  'http.client.request.duration',
  'db.client.operation.duration',
];

let sdk: NodeSDK | undefined;

/** What a Redis span records of a command: its name, never its keys or arguments. */
export function redisStatement(command: string): string {
  return command;
}

/** The version of the Tether build running (the root package.json), for `service.version`. */
function tetherVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth += 1) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'tether' && manifest.version) return manifest.version;
    } catch {
      // No manifest at this level: keep climbing.
    }
    dir = dirname(dir);
  }
  return 'unknown';
}

/**
 * HTTP and pg are instrumented always: their duration histograms are the standard series the
 * dashboards read, with or without traces (without them the sampler is off, so their spans are
 * non-recording and cheap). Redis and Prisma only make spans, so only when traces go somewhere.
 */
function instrumentations(tracing: boolean) {
  const always = [
    new HttpInstrumentation({ ignoreIncomingRequestHook: untraced }),
    // Without tracing no span is ever active, and requireParentSpan would skip the metric too.
    // Statements are parameterised; their values are never recorded (the default, pinned).
    new PgInstrumentation({ requireParentSpan: tracing, enhancedDatabaseReporting: false }),
    new RuntimeNodeInstrumentation(),
  ];
  if (!tracing) return always;
  return [
    ...always,
    // The command name only: arguments hold session state, and a ledger script's hold the
    // recorded reply (prompt and agent output). docs/security.md "Telemetry redaction".
    new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: redisStatement }),
    new PrismaInstrumentation({ ignoreSpanTypes: PRISMA_SPANS_IGNORED }),
  ];
}

const views: ViewOptions[] = STANDARD_HISTOGRAMS.map((instrumentName) => ({
  instrumentName,
  aggregation: {
    type: AggregationType.EXPLICIT_BUCKET_HISTOGRAM,
    options: { boundaries: LATENCY_BUCKETS_S },
  },
}));

/**
 * Starts the OpenTelemetry SDK once per process, before the app loads its libraries. The
 * `OTEL_*` variables are the SDK's own (exporter, endpoint, protocol including `http/json`,
 * sampler, batch settings, OTEL_RESOURCE_ATTRIBUTES); `OTEL_SERVICE_NAME` defaults to
 * `tether-<app>`. Metrics are read by the Prometheus pull reader that `/metrics` serializes.
 */
export function startTelemetry(entry: string | undefined = process.argv[1]): void {
  if (sdk) return;
  const config = loadTelemetryConfig();
  if (config.disabled) return;
  const tracing = config.tracesConfigured;
  // Pull reader only: `/metrics` is served by the app (ops-server.ts), never by the exporter.
  const prometheus = new PrometheusExporter({ preventServerStart: true });
  setMetricsReader(prometheus);
  sdk = new NodeSDK({
    // OTEL_SERVICE_NAME, when set, wins: only name the service when the operator did not.
    ...(config.serviceName ? {} : { serviceName: defaultServiceName(entry) }),
    // OTEL_RESOURCE_ATTRIBUTES (the env detector) overrides these. The process detector is left
    // out: its command line and executable path would put machine paths in every span.
    resource: resourceFromAttributes({
      'service.version': tetherVersion(),
      'deployment.environment.name': config.deploymentEnvironment,
    }),
    resourceDetectors: [hostDetector, serviceInstanceIdDetector, envDetector],
    metricReaders: [prometheus],
    views,
    // No span processor at all when nobody collects traces (see TelemetryConfig.tracesConfigured),
    // and a sampler that records nothing, so instrumented calls cost a no-op span; otherwise the
    // SDK builds them from OTEL_TRACES_EXPORTER / OTEL_EXPORTER_OTLP_* / OTEL_TRACES_SAMPLER.
    ...(tracing ? {} : { spanProcessors: [], sampler: new AlwaysOffSampler() }),
    instrumentations: instrumentations(tracing),
  });
  sdk.start();
  registerProcessMetrics();
  // The apps are ES modules: a static `import { Redis } from 'ioredis'` never passes through
  // `require`, so the hook would miss it. Loading these CommonJS packages once through `require`
  // here lets the instrumentations patch their prototypes before the app imports them.
  const require = createRequire(import.meta.url);
  for (const name of tracing ? ['ioredis', 'pg', 'node:http'] : ['pg', 'node:http']) {
    try {
      require(name);
    } catch {
      // Not installed where this app runs (the edge has no Redis client): nothing to patch.
    }
  }
}

/** Flushes pending spans; apps call it on shutdown so the last spans of a request are not lost. */
export async function shutdownTelemetry(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  await running?.shutdown().catch(() => undefined);
}
