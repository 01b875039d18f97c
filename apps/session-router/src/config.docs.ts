import type { VariableDocs } from '#config';

/** What the router's own variables mean (docs/configuration.md is generated from this and config.ts). */
export const ROUTER_VARIABLE_DOCS: VariableDocs = {
  TETHER_REDIS_URL: {
    meaning:
      'Redis holding session revisions, leases, presence and the mutation ledger: `redis://[user[:password]@]host:port[/db]` for one server, `redis-cluster://host:port,host:port…` for a Redis Cluster (seed nodes), `redis-sentinel://host:port,host:port…[/db]?name=<master group>` for a Sentinel-managed master; `rediss`, `rediss-cluster`, `rediss-sentinel` for TLS (docs/scaling.md "Redis"). Unset: `redis://127.0.0.1:6379`.',
  },
  TETHER_REDIS_CLUSTER_NODES: {
    meaning:
      "Instead of `TETHER_REDIS_URL`: a Redis Cluster's seed nodes, comma-separated `host:port` (TLS when a `TETHER_REDIS_TLS_*` file is set).",
  },
  TETHER_REDIS_USERNAME: {
    meaning: 'ACL user the router authenticates as, when the URL names none.',
  },
  TETHER_REDIS_PASSWORD_FILE: {
    meaning:
      'Path of a file holding the Redis password (one trailing newline ignored), when the URL carries none; never logged.',
  },
  TETHER_REDIS_SENTINEL_PASSWORD_FILE: {
    meaning: 'Path of a file holding the password of the sentinels themselves (Sentinel mode only).',
  },
  TETHER_REDIS_TLS_CA: {
    meaning: "Path of the CA certificate (PEM) that signed the Redis servers' certificates; needs a TLS URL.",
  },
  TETHER_REDIS_TLS_CERT: {
    meaning:
      'Path of a client certificate (PEM) for Redis servers that require one; set together with `TETHER_REDIS_TLS_KEY`.',
  },
  TETHER_REDIS_TLS_KEY: {
    meaning: "Path of the client certificate's private key (PEM); set together with `TETHER_REDIS_TLS_CERT`.",
  },
  TETHER_WATCH_WAIT_MS: {
    meaning: 'How long a `watch` waits for the session revision to move before it answers.',
  },
  TETHER_LEASE_REAPER_INTERVAL_MS: {
    meaning: 'How often the lease reaper looks for expired session leases.',
  },
  TETHER_EDGE_RPC_TIMEOUT_MS: { meaning: "How long the router waits for an edge's answer." },
  TETHER_OPERATIONS_PER_SESSION_MAX: {
    meaning: 'Live operation records (idempotent mutations) kept per session in the ledger.',
  },
  TETHER_OPERATION_CLAIM_MS: {
    meaning:
      "How long one replica's claim on a running operation lasts unless renewed; a live run renews it every third of this, so it is how soon another replica takes over the operations of a replica that died, and the longest stall a live run outlasts.",
  },
  TETHER_OPERATION_WAIT_MS: {
    meaning: 'How long a duplicate of a running operation waits for the first copy to settle.',
  },
  TETHER_SUBMISSION_SWEEP_INTERVAL_MS: {
    meaning:
      'How often one replica sweeps sends left `pending` by a dead replica and asks edges about `unknown` ones.',
  },
  TETHER_SUBMISSION_RECONCILE_BACKOFF_MS: {
    meaning: 'How long an `unknown` send waits before its edge is asked about it again.',
  },
  TETHER_EDGE_LIVENESS_CHECK_MS: {
    meaning:
      'While a call or watch waits on an edge, how often its presence is read, so a dead or hung edge releases its waiters within one period of its expiry (docs/reliability.md).',
  },
};
