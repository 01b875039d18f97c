import { z } from 'zod';
import {
  checkNatsEnv,
  intVar,
  journalKeyVar,
  journalPreviousKeysVar,
  loadConfig,
  logLevelVar,
  namespaceVar,
  natsEnv,
  sessionsStreamEnv,
  sessionsStreamSettings,
  natsSettings,
  nodeEnvVar,
  refuseWeakSecrets,
} from '#config';
import { Limits } from '#contracts';
import { metricsPortVar, shutdownDelayVar, shutdownGraceVar } from '#telemetry';
import { checkRedisEnv, redisEnv, redisSettings } from './common/redis-topology.js';

/**
 * A live run renews its claim every third of this (operations/claim-renewal.ts), so this is how
 * long a dead replica's operations wait for another replica, and the longest stall (a GC pause,
 * a blocked event loop, Redis out of reach) a live run outlasts without being taken over.
 */
const OPERATION_CLAIM_DEFAULT_MS = 10_000;
/** Below the api's own timeout, so a waiting duplicate still gets its answer through. */
const OPERATION_WAIT_DEFAULT_MS = 30_000;
const SUBMISSION_SWEEP_DEFAULT_MS = 30_000;
const SUBMISSION_RECONCILE_BACKOFF_DEFAULT_MS = 5 * 60_000;
/** A quarter of a second on top of the presence expiry (and a probe) keeps a dead edge's answer under 3 s. */
const EDGE_LIVENESS_CHECK_DEFAULT_MS = 250;

/** The session router's environment, validated once at boot. */
export const routerConfigSchema = z
  .object({
    NODE_ENV: nodeEnvVar(),
    ...natsEnv,
    ...sessionsStreamEnv,
    TETHER_NAMESPACE: namespaceVar(),
    TETHER_LOG_LEVEL: logLevelVar(),
    /** Standalone, Cluster or Sentinel, TLS and ACL user (common/redis-topology.ts). */
    ...redisEnv,
    TETHER_EDGE_SECRET: z.string().min(16, 'must be at least 16 characters'),
    /** The journal's content key (docs/security.md "Content encryption"); previous keys only open. */
    TETHER_JOURNAL_KEY: journalKeyVar(),
    TETHER_JOURNAL_PREVIOUS_KEYS: journalPreviousKeysVar(),
    /** How long a watch waits for the revision to move; tests shorten it. */
    TETHER_WATCH_WAIT_MS: intVar(Limits.WATCH_WAIT_MS, 1, Limits.WATCH_WAIT_MS),
    /** How often the lease reaper runs; tests may shorten it. */
    TETHER_LEASE_REAPER_INTERVAL_MS: intVar(Limits.LEASE_REAPER_INTERVAL_MS, 50, 60_000),
    /** /metrics, /healthz, /readyz (docs/observability.md). */
    TETHER_METRICS_PORT: metricsPortVar(9465),
    /** How long the router waits for an edge's answer; tests shorten it to reach timeouts. */
    TETHER_EDGE_RPC_TIMEOUT_MS: intVar(
      Limits.ROUTER_EDGE_RPC_TIMEOUT_MS,
      100,
      Limits.ROUTER_EDGE_RPC_TIMEOUT_MS,
    ),
    /**
     * Mutation ledger (docs/contract.md "Idempotent mutations"): live operation records per
     * session; how long a replica's claim on a running operation lasts unless renewed (a live run
     * renews it); how long a duplicate waits for the first to settle.
     */
    TETHER_OPERATIONS_PER_SESSION_MAX: intVar(
      Limits.OPERATIONS_PER_CALLER_MAX,
      1,
      Limits.OPERATIONS_GLOBAL_MAX,
    ),
    TETHER_OPERATION_CLAIM_MS: intVar(OPERATION_CLAIM_DEFAULT_MS, 500, 10 * 60_000),
    TETHER_OPERATION_WAIT_MS: intVar(OPERATION_WAIT_DEFAULT_MS, 0, Limits.API_ROUTER_TIMEOUT_MS),
    /**
     * Crash boundary (docs/contract.md "Unconfirmed sends"): how often one replica sweeps sends
     * left `pending` by a dead replica and asks edges what became of `unknown` ones; how long an
     * `unknown` send waits before its edge is asked again.
     */
    TETHER_SUBMISSION_SWEEP_INTERVAL_MS: intVar(SUBMISSION_SWEEP_DEFAULT_MS, 100, 10 * 60_000),
    TETHER_SUBMISSION_RECONCILE_BACKOFF_MS: intVar(SUBMISSION_RECONCILE_BACKOFF_DEFAULT_MS, 100, 60 * 60_000),
    /** SIGTERM handling (docs/operations.md "Graceful shutdown"). */
    TETHER_SHUTDOWN_GRACE_MS: shutdownGraceVar(),
    TETHER_SHUTDOWN_DELAY_MS: shutdownDelayVar(),
    /**
     * Edge liveness (docs/reliability.md): while a call or watch waits on an edge, its presence is
     * read this often, so a dead or hung edge releases its waiters within one period of its expiry.
     */
    TETHER_EDGE_LIVENESS_CHECK_MS: intVar(EDGE_LIVENESS_CHECK_DEFAULT_MS, 50, 5_000),
  })
  .superRefine(checkNatsEnv)
  .superRefine(checkRedisEnv)
  .superRefine(refuseWeakSecrets(['TETHER_EDGE_SECRET', 'TETHER_JOURNAL_KEY']))
  .transform((env) => ({
    nats: natsSettings(env),
    sessionsStream: sessionsStreamSettings(env),
    namespace: env.TETHER_NAMESPACE,
    logLevel: env.TETHER_LOG_LEVEL,
    redis: redisSettings(env),
    edgeSecret: env.TETHER_EDGE_SECRET,
    journalKeys: { current: env.TETHER_JOURNAL_KEY, previous: env.TETHER_JOURNAL_PREVIOUS_KEYS },
    watchWaitMs: env.TETHER_WATCH_WAIT_MS,
    leaseReaperIntervalMs: env.TETHER_LEASE_REAPER_INTERVAL_MS,
    metricsPort: env.TETHER_METRICS_PORT,
    shutdown: { graceMs: env.TETHER_SHUTDOWN_GRACE_MS, delayMs: env.TETHER_SHUTDOWN_DELAY_MS },
    edgeRpcTimeoutMs: env.TETHER_EDGE_RPC_TIMEOUT_MS,
    operationsPerSessionMax: env.TETHER_OPERATIONS_PER_SESSION_MAX,
    operationClaimMs: env.TETHER_OPERATION_CLAIM_MS,
    operationWaitMs: env.TETHER_OPERATION_WAIT_MS,
    submissionSweepIntervalMs: env.TETHER_SUBMISSION_SWEEP_INTERVAL_MS,
    submissionReconcileBackoffMs: env.TETHER_SUBMISSION_RECONCILE_BACKOFF_MS,
    edgeLivenessCheckMs: env.TETHER_EDGE_LIVENESS_CHECK_MS,
    /**
     * A `pending` submission older than this is looked at by the sweep: by then a dead replica's
     * claim has run out and the edge call it made has timed out. A live run keeps renewing its
     * claim, and the sweep leaves a record with a live claim alone (the ledger's SWEEP step).
     */
    submissionSweepAfterMs: env.TETHER_OPERATION_CLAIM_MS + env.TETHER_EDGE_RPC_TIMEOUT_MS,
  }));

export type RouterConfig = z.infer<typeof routerConfigSchema>;

export function loadRouterConfig(env?: Record<string, string | undefined>): RouterConfig {
  return loadConfig(routerConfigSchema, env);
}
