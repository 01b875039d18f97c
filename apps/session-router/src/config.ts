import { z } from 'zod';
import { intVar, loadConfig, logLevelVar, natsUrlVar, redisUrlVar } from '#config';
import { DEFAULT_NAMESPACE, Limits } from '#contracts';
import { metricsPortVar } from '#telemetry';

/** The session router's environment, validated once at boot. */
export const routerConfigSchema = z
  .object({
    TETHER_NATS_URL: natsUrlVar(),
    TETHER_NAMESPACE: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'must be lowercase letters, digits, _ or -, at most 32')
      .default(DEFAULT_NAMESPACE),
    TETHER_LOG_LEVEL: logLevelVar(),
    TETHER_REDIS_URL: redisUrlVar(),
    TETHER_EDGE_SECRET: z.string().min(16, 'must be at least 16 characters'),
    /** How long a watch waits for the revision to move; tests shorten it. */
    TETHER_WATCH_WAIT_MS: intVar(Limits.WATCH_WAIT_MS, 1, Limits.WATCH_WAIT_MS),
    /** How often the lease reaper runs; tests may shorten it. */
    TETHER_LEASE_REAPER_INTERVAL_MS: intVar(Limits.LEASE_REAPER_INTERVAL_MS, 50, 60_000),
    /** /metrics, /healthz, /readyz (docs/observability.md). */
    TETHER_METRICS_PORT: metricsPortVar(9465),
  })
  .transform((env) => ({
    natsUrl: env.TETHER_NATS_URL,
    namespace: env.TETHER_NAMESPACE,
    logLevel: env.TETHER_LOG_LEVEL,
    redisUrl: env.TETHER_REDIS_URL,
    edgeSecret: env.TETHER_EDGE_SECRET,
    watchWaitMs: env.TETHER_WATCH_WAIT_MS,
    leaseReaperIntervalMs: env.TETHER_LEASE_REAPER_INTERVAL_MS,
    metricsPort: env.TETHER_METRICS_PORT,
  }));

export type RouterConfig = z.infer<typeof routerConfigSchema>;

export function loadRouterConfig(env?: Record<string, string | undefined>): RouterConfig {
  return loadConfig(routerConfigSchema, env);
}
