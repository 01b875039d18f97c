// One Redis client for every topology the router supports (common/redis-topology.ts). The router
// only ever sends single-slot commands (every script and pipeline keeps to one session's hash tag,
// docs/scaling.md "Redis"), so the same repositories run unchanged on a server, a Sentinel-managed
// master or a Redis Cluster; the few whole-keyspace reads go through `forEachMaster`.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisSettings, RedisTlsSettings } from './redis-topology.js';

/** What the repositories hold: a Redis (standalone or Sentinel) or a Cluster; both run the same commands. */
export type RedisClient = Redis | Cluster;

/** A request fails after this many reconnections instead of queueing behind a user's watch. */
const MAX_RETRIES_PER_REQUEST = 2;
/**
 * Cluster: a command that meets a closed connection or CLUSTERDOWN is retried every
 * FAILOVER_RETRY_MS up to MAX_REDIRECTIONS times (~5 s), long enough for a replica of a killed
 * master to be promoted on a small cluster-node-timeout, short enough to answer `unavailable`
 * well within the api's timeout when the failover takes longer.
 */
const MAX_REDIRECTIONS = 16;
const FAILOVER_RETRY_MS = 300;
const CLUSTER_RECONNECT_MAX_MS = 2_000;
const SLOTS_REFRESH_TIMEOUT_MS = 2_000;

function tlsOptions(tls: RedisTlsSettings | undefined): ConnectionOptions | undefined {
  if (!tls) return undefined;
  return {
    ...(tls.caFile && { ca: readFileSync(tls.caFile) }),
    ...(tls.certFile && { cert: readFileSync(tls.certFile) }),
    ...(tls.keyFile && { key: readFileSync(tls.keyFile) }),
  };
}

export interface RedisClientOptions {
  /** Connection name shown by `CLIENT LIST` (no secrets). */
  connectionName?: string;
  /** Connection errors (the client reconnects by itself); unset, ioredis prints them. */
  onError?: (error: Error) => void;
}

/** A connected client (connection starts at once; commands queue until it is ready). */
export function createRedisClient(settings: RedisSettings, options: RedisClientOptions = {}): RedisClient {
  const client = connect(settings, options);
  if (options.onError) client.on('error', options.onError);
  return client;
}

function connect(settings: RedisSettings, options: RedisClientOptions): RedisClient {
  const tls = tlsOptions(settings.tls);
  const common: RedisOptions = {
    ...(settings.username && { username: settings.username }),
    ...(settings.password && { password: settings.password }),
    ...(tls && { tls }),
    ...(options.connectionName && { connectionName: options.connectionName }),
    maxRetriesPerRequest: MAX_RETRIES_PER_REQUEST,
  };
  switch (settings.mode) {
    case 'standalone':
      return new Redis({
        ...common,
        host: settings.node.host,
        port: settings.node.port,
        db: settings.db,
        enableAutoPipelining: true,
      });
    case 'sentinel':
      return new Redis({
        ...common,
        sentinels: settings.sentinels,
        name: settings.name,
        db: settings.db,
        ...(settings.sentinelPassword && { sentinelPassword: settings.sentinelPassword }),
        ...(tls && { enableTLSForSentinelMode: true, sentinelTLS: tls }),
        // A master demoted without its connection dropping (a manual failover) answers READONLY:
        // reconnect, which asks the sentinels for the master again, and resend. (ioredis's
        // `failoverDetector` is left off: a switch announced while the client is reconnecting
        // leaves it closed for good.)
        reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
        enableAutoPipelining: true,
      });
    case 'cluster': {
      const clusterOptions: ClusterOptions = {
        // Reads must see the write a script just made: replicas lag, so everything goes to masters.
        scaleReads: 'master',
        enableAutoPipelining: true,
        maxRedirections: MAX_REDIRECTIONS,
        retryDelayOnFailover: FAILOVER_RETRY_MS,
        retryDelayOnClusterDown: FAILOVER_RETRY_MS,
        retryDelayOnTryAgain: FAILOVER_RETRY_MS,
        slotsRefreshTimeout: SLOTS_REFRESH_TIMEOUT_MS,
        clusterRetryStrategy: (times) => Math.min(100 * times, CLUSTER_RECONNECT_MAX_MS),
        redisOptions: common,
      };
      return new Cluster(settings.nodes, clusterOptions);
    }
  }
}

/**
 * Runs `read` on every master (the whole keyspace) and returns the results in node order: on a
 * Cluster a SCAN or a count only sees the node it is sent to. Replicas are skipped, so nothing is
 * counted twice.
 */
export async function forEachMaster<T>(redis: RedisClient, read: (node: Redis) => Promise<T>): Promise<T[]> {
  if (!(redis instanceof Cluster)) return [await read(redis)];
  // The node list is only as fresh as the last slot refresh: a killed master stays in it until
  // then, and its replica (now the master) may be missing. One CLUSTER SLOTS first.
  await new Promise<void>((resolve) => redis.refreshSlotsCache(() => resolve()));
  return Promise.all(redis.nodes('master').map((node) => read(node)));
}

/** Every key matching `pattern` on every master, at most `maxSteps` SCAN steps per node. */
export async function scanKeys(
  redis: RedisClient,
  pattern: string,
  count = 1_000,
  maxSteps = 100,
): Promise<string[]> {
  const perNode = await forEachMaster(redis, async (node) => {
    const keys: string[] = [];
    let cursor = '0';
    for (let step = 0; step < maxSteps; step += 1) {
      const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      keys.push(...batch);
      cursor = next;
      if (cursor === '0') break;
    }
    return keys;
  });
  return perNode.flat();
}
