import { z } from 'zod';
import {
  checkNatsEnv,
  journalKeyVar,
  journalPreviousKeysVar,
  databaseUrlVar,
  intVar,
  loadConfig,
  logLevelVar,
  namespaceVar,
  natsEnv,
  auditStreamEnv,
  auditStreamSettings,
  sessionsStreamEnv,
  sessionsStreamSettings,
  natsSettings,
  nodeEnvVar,
  refuseWeakSecrets,
} from '#config';
import { metricsPortVar, shutdownDelayVar, shutdownGraceVar } from '#telemetry';
import {
  checkEdgeAuthorityEnv,
  edgeAuthorityEnv,
  edgeAuthoritySettings,
} from './connectors/edge-authority.config.js';

/** Journal messages handed to one history replica before it must ack some (see journal.consumer.ts). */
export const JOURNAL_MAX_ACK_PENDING_DEFAULT = 2048;
/**
 * Session-batches of the journal consumer written at once, one pooled connection each; kept below
 * the pool size so request handlers always find a connection.
 */
export const JOURNAL_WRITE_CONCURRENCY_DEFAULT = 4;
/** How often a replica looks for journals to compact (reference orca §1.10); 10 minutes. */
export const JOURNAL_COMPACTION_INTERVAL_MS_DEFAULT = 10 * 60_000;
/** The reference's compaction policy: keep at least 512 rows, and every row of the last 2 h. */
export const JOURNAL_COMPACTION_MIN_TAIL_ROWS_DEFAULT = 512;
export const JOURNAL_COMPACTION_RETAIN_TAIL_MS_DEFAULT = 2 * 60 * 60_000;
/**
 * Postgres connections per replica, all pools together: the authorize statement's own pool
 * (AUTHORIZE_POOL_CONNECTIONS) and Prisma's pool (the rest: request handlers plus the journal
 * consumer's transactions). Size the server's `max_connections` for replicas × this.
 */
export const DATABASE_MAX_CONNECTIONS_DEFAULT = 10;
/**
 * The authorize lookup's share (authorize.repository.ts): one short prepared statement per call,
 * so two connections keep up with every poll (B1).
 */
export const AUTHORIZE_POOL_CONNECTIONS = 2;

/** The history service's environment, validated once at boot. */
export const historyConfigSchema = z
  .object({
    NODE_ENV: nodeEnvVar(),
    ...natsEnv,
    ...sessionsStreamEnv,
    ...auditStreamEnv,
    TETHER_NAMESPACE: namespaceVar(),
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
    /** The journal's content key (docs/security.md "Content encryption"); previous keys only open. */
    TETHER_JOURNAL_KEY: journalKeyVar(),
    TETHER_JOURNAL_PREVIOUS_KEYS: journalPreviousKeysVar(),
    TETHER_JOURNAL_MAX_ACK_PENDING: intVar(JOURNAL_MAX_ACK_PENDING_DEFAULT, 1, 10_000),
    TETHER_JOURNAL_WRITE_CONCURRENCY: intVar(JOURNAL_WRITE_CONCURRENCY_DEFAULT, 1, 64),
    /** 0 turns the periodic compaction off (another replica, or nothing, compacts). */
    TETHER_JOURNAL_COMPACTION_INTERVAL_MS: intVar(
      JOURNAL_COMPACTION_INTERVAL_MS_DEFAULT,
      0,
      24 * 60 * 60_000,
    ),
    TETHER_JOURNAL_COMPACTION_MIN_TAIL_ROWS: intVar(JOURNAL_COMPACTION_MIN_TAIL_ROWS_DEFAULT, 1, 1_000_000),
    TETHER_JOURNAL_COMPACTION_RETAIN_TAIL_MS: intVar(
      JOURNAL_COMPACTION_RETAIN_TAIL_MS_DEFAULT,
      0,
      30 * 24 * 60 * 60_000,
    ),
    /** /metrics, /healthz, /readyz (docs/observability.md). */
    TETHER_METRICS_PORT: metricsPortVar(9466),
    ...edgeAuthorityEnv,
    /** SIGTERM handling (docs/operations.md "Graceful shutdown"). */
    TETHER_SHUTDOWN_GRACE_MS: shutdownGraceVar(),
    TETHER_SHUTDOWN_DELAY_MS: shutdownDelayVar(),
  })
  .refine(
    (env) =>
      env.TETHER_JOURNAL_WRITE_CONCURRENCY < env.TETHER_DATABASE_MAX_CONNECTIONS - AUTHORIZE_POOL_CONNECTIONS,
    {
      message: `must be below TETHER_DATABASE_MAX_CONNECTIONS minus the authorize pool's ${AUTHORIZE_POOL_CONNECTIONS} (request handlers need connections too)`,
      path: ['TETHER_JOURNAL_WRITE_CONCURRENCY'],
    },
  )
  .superRefine(checkNatsEnv)
  .superRefine(checkEdgeAuthorityEnv)
  .superRefine(refuseWeakSecrets(['TETHER_EDGE_SECRET', 'TETHER_HISTORY_KEY', 'TETHER_JOURNAL_KEY']))
  .transform((env) => ({
    nats: natsSettings(env),
    jetstream: { sessions: sessionsStreamSettings(env), audit: auditStreamSettings(env) },
    namespace: env.TETHER_NAMESPACE,
    logLevel: env.TETHER_LOG_LEVEL,
    databaseUrl: env.TETHER_DATABASE_URL,
    databaseMaxConnections: env.TETHER_DATABASE_MAX_CONNECTIONS,
    /** The split of databaseMaxConnections; the refine above leaves Prisma at least 2. */
    databasePools: {
      prisma: env.TETHER_DATABASE_MAX_CONNECTIONS - AUTHORIZE_POOL_CONNECTIONS,
      authorize: AUTHORIZE_POOL_CONNECTIONS,
    },
    edgeSecret: env.TETHER_EDGE_SECRET,
    historyKey: env.TETHER_HISTORY_KEY,
    journalKeys: { current: env.TETHER_JOURNAL_KEY, previous: env.TETHER_JOURNAL_PREVIOUS_KEYS },
    journalMaxAckPending: env.TETHER_JOURNAL_MAX_ACK_PENDING,
    journalWriteConcurrency: env.TETHER_JOURNAL_WRITE_CONCURRENCY,
    journalCompaction: {
      intervalMs: env.TETHER_JOURNAL_COMPACTION_INTERVAL_MS,
      policy: {
        minTailRows: env.TETHER_JOURNAL_COMPACTION_MIN_TAIL_ROWS,
        retainTailMs: env.TETHER_JOURNAL_COMPACTION_RETAIN_TAIL_MS,
      },
    },
    metricsPort: env.TETHER_METRICS_PORT,
    edgeAuthority: edgeAuthoritySettings(env),
    shutdown: { graceMs: env.TETHER_SHUTDOWN_GRACE_MS, delayMs: env.TETHER_SHUTDOWN_DELAY_MS },
  }));

export type HistoryConfig = z.infer<typeof historyConfigSchema>;

export function loadHistoryConfig(env?: Record<string, string | undefined>): HistoryConfig {
  return loadConfig(historyConfigSchema, env);
}
