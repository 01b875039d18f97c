import { z } from 'zod';
import { databaseUrlVar, intVar, loadConfig, logLevelVar, natsUrlVar } from '#config';
import { DEFAULT_NAMESPACE } from '#contracts';
import { metricsPortVar } from '#telemetry';

/** Journal messages handed to one history replica before it must ack some (see journal.consumer.ts). */
export const JOURNAL_MAX_ACK_PENDING_DEFAULT = 256;
/** Pool size per replica: request handlers plus the journal consumer's transactions. */
export const DATABASE_MAX_CONNECTIONS_DEFAULT = 10;

/** The history service's environment, validated once at boot. */
export const historyConfigSchema = z
  .object({
    TETHER_NATS_URL: natsUrlVar(),
    TETHER_NAMESPACE: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'must be lowercase letters, digits, _ or -, at most 32')
      .default(DEFAULT_NAMESPACE),
    TETHER_LOG_LEVEL: logLevelVar(),
    TETHER_DATABASE_URL: databaseUrlVar(),
    TETHER_DATABASE_MAX_CONNECTIONS: intVar(DATABASE_MAX_CONNECTIONS_DEFAULT, 1, 200),
    /** Signs edge tokens at enrollment; the router verifies them with the same secret. */
    TETHER_EDGE_SECRET: z.string().min(16, 'must be at least 16 characters'),
    /**
     * Secret the at-rest encryption key of stored history is derived from (HKDF-SHA-256). Losing
     * or changing it makes stored history unreadable (docs/contract.md "History at rest").
     */
    TETHER_HISTORY_KEY: z.string().min(32, 'must be at least 32 characters'),
    TETHER_JOURNAL_MAX_ACK_PENDING: intVar(JOURNAL_MAX_ACK_PENDING_DEFAULT, 1, 10_000),
    /** /metrics, /healthz, /readyz (docs/observability.md). */
    TETHER_METRICS_PORT: metricsPortVar(9466),
  })
  .transform((env) => ({
    natsUrl: env.TETHER_NATS_URL,
    namespace: env.TETHER_NAMESPACE,
    logLevel: env.TETHER_LOG_LEVEL,
    databaseUrl: env.TETHER_DATABASE_URL,
    databaseMaxConnections: env.TETHER_DATABASE_MAX_CONNECTIONS,
    edgeSecret: env.TETHER_EDGE_SECRET,
    historyKey: env.TETHER_HISTORY_KEY,
    journalMaxAckPending: env.TETHER_JOURNAL_MAX_ACK_PENDING,
    metricsPort: env.TETHER_METRICS_PORT,
  }));

export type HistoryConfig = z.infer<typeof historyConfigSchema>;

export function loadHistoryConfig(env?: Record<string, string | undefined>): HistoryConfig {
  return loadConfig(historyConfigSchema, env);
}
