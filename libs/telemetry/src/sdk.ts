import { createRequire } from 'node:module';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { PrismaInstrumentation } from '@prisma/instrumentation';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import type { IncomingMessage } from 'node:http';
import { loadTelemetryConfig } from './config.js';
import { defaultServiceName } from './service-name.js';
import { setMetricsReader } from './reader.js';

/** Paths that are scraped or probed every few seconds: tracing them would only add noise. */
const UNTRACED_PATHS = new Set(['/metrics', '/healthz', '/readyz']);

let sdk: NodeSDK | undefined;

/** What a Redis span records of a command: its name, never its keys or arguments. */
export function redisStatement(command: string): string {
  return command;
}

function untraced(request: IncomingMessage): boolean {
  const url = request.url ?? '';
  const query = url.indexOf('?');
  return UNTRACED_PATHS.has(query < 0 ? url : url.slice(0, query));
}

/**
 * Starts the OpenTelemetry SDK once per process, before the app loads its libraries. The
 * `OTEL_*` variables are the SDK's own (exporter, endpoint, protocol including `http/json`,
 * sampler, batch settings); `OTEL_SERVICE_NAME` defaults to `tether-<app>`. Metrics are read by
 * the Prometheus pull reader that `/metrics` serializes.
 */
export function startTelemetry(entry: string | undefined = process.argv[1]): void {
  if (sdk) return;
  const config = loadTelemetryConfig();
  if (config.disabled) return;
  // Pull reader only: `/metrics` is served by the app (ops-server.ts), never by the exporter.
  const prometheus = new PrometheusExporter({ preventServerStart: true });
  setMetricsReader(prometheus);
  sdk = new NodeSDK({
    // OTEL_SERVICE_NAME, when set, wins: only name the service when the operator did not.
    ...(config.serviceName ? {} : { serviceName: defaultServiceName(entry) }),
    metricReaders: [prometheus],
    // No span processor at all when nobody collects traces (see TelemetryConfig.tracesConfigured);
    // otherwise the SDK builds them from OTEL_TRACES_EXPORTER / OTEL_EXPORTER_OTLP_*.
    ...(config.tracesConfigured ? {} : { spanProcessors: [] }),
    // Instrumentations only make spans; Tether's metrics are its own. Patching every HTTP request,
    // Redis command and query costs about a tenth of the api's CPU, so only when traces go somewhere.
    instrumentations: config.tracesConfigured
      ? [
          new HttpInstrumentation({ ignoreIncomingRequestHook: untraced }),
          new FastifyOtelInstrumentation({ registerOnInitialization: true }),
          // The command name only: arguments hold session state, and a ledger script's hold the
          // recorded reply (prompt and agent output). docs/security.md "Telemetry redaction".
          new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: redisStatement }),
          // Statements are parameterised; their values are never recorded (the default, pinned).
          new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
          new PrismaInstrumentation(),
        ]
      : [],
  });
  sdk.start();
  // The apps are ES modules: a static `import { Redis } from 'ioredis'` never passes through
  // `require`, so the hook would miss it. Loading these CommonJS packages once through `require`
  // here lets the instrumentations patch their prototypes before the app imports them.
  if (!config.tracesConfigured) return;
  const require = createRequire(import.meta.url);
  for (const name of ['ioredis', 'pg', 'node:http']) {
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
