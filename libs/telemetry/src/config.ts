import { z } from 'zod';
import { loadConfig } from '#config';

/**
 * The few variables the telemetry bootstrap reads itself. Everything else (`OTEL_EXPORTER_OTLP_*`,
 * `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, ...) is read by the OpenTelemetry SDK, as its spec says.
 */
const telemetryEnvSchema = z.object({
  OTEL_SERVICE_NAME: z.string().optional(),
  OTEL_SDK_DISABLED: z.string().optional(),
  OTEL_TRACES_EXPORTER: z.string().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().optional(),
  /**
   * The share of background rounds (heartbeats, reaper ticks, sweeps, compactions) traced, each
   * as a short trace of its own; 0 turns them off, 1 traces every round.
   */
  TETHER_TRACE_BACKGROUND_RATIO: z.coerce.number().min(0).max(1).default(0.01),
  /** The `deployment.environment.name` resource attribute, unless OTEL_RESOURCE_ATTRIBUTES names one. */
  NODE_ENV: z.string().default('development'),
  /** `json` (default: one JSON object per line) or `text` (Nest's console format, for humans). */
  TETHER_LOG_FORMAT: z.enum(['json', 'text']).default('json'),
});

export interface TelemetryConfig {
  /** Set when the operator named the service; otherwise the app's own name is used. */
  serviceName?: string;
  disabled: boolean;
  /**
   * An operator named a trace exporter or an OTLP endpoint. Without one, the SDK's default would
   * export every span to localhost:4318 whether or not a collector listens there: wasted work on
   * the hot path and a stream of export errors. So tracing stays off until it is configured.
   */
  tracesConfigured: boolean;
  logFormat: 'json' | 'text';
  /** TETHER_TRACE_BACKGROUND_RATIO (see background.ts). */
  backgroundSampleRatio: number;
  deploymentEnvironment: string;
}

export function loadTelemetryConfig(env?: Record<string, string | undefined>): TelemetryConfig {
  const parsed = loadConfig(telemetryEnvSchema, env);
  return {
    serviceName: parsed.OTEL_SERVICE_NAME || undefined,
    disabled: parsed.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true',
    tracesConfigured: Boolean(
      parsed.OTEL_TRACES_EXPORTER ||
      parsed.OTEL_EXPORTER_OTLP_ENDPOINT ||
      parsed.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    ),
    logFormat: parsed.TETHER_LOG_FORMAT,
    backgroundSampleRatio: parsed.TETHER_TRACE_BACKGROUND_RATIO,
    deploymentEnvironment: parsed.NODE_ENV,
  };
}

/** `off` (no server), `0` (an ephemeral port, logged at start) or a port number. */
export type MetricsPort = number | 'off';

/**
 * `TETHER_METRICS_PORT` for an app's config schema: unset means `fallback`; `off` or an empty
 * value turns the ops server off; `0` asks for an ephemeral port.
 */
export function metricsPortVar(fallback: MetricsPort) {
  return z
    .string()
    .optional()
    .transform((value, ctx): MetricsPort => {
      if (value === undefined) return fallback;
      if (value === '' || value === 'off') return 'off';
      const port = Number(value);
      if (!Number.isInteger(port) || port < 0 || port > 65_535) {
        ctx.addIssue({ code: 'custom', message: 'must be off or a port number (0 = ephemeral)' });
        return z.NEVER;
      }
      return port;
    });
}
