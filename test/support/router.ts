// Shared pieces of the router suites: real routers on a suite namespace, a raw NATS responder
// standing in for an edge, and cleanup of everything the suite created.
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import {
  edgeToken,
  result,
  Subjects,
  type EdgeAgentRPCRequest,
  type EdgeAgentResult,
  type SessionUpdate,
} from '#contracts';
import { connectNats, decodeJson, encodeJson } from '#messaging';
import {
  answerEdgeCredentials,
  testServices,
  uniqueNamespace,
  TEST_EDGE_SECRET,
  TEST_JOURNAL_KEY,
} from '#test-support';
import {
  createRedisClient,
  scanKeys,
  type RedisClient,
} from '../../apps/session-router/src/common/redis-client.js';
import { RedisKeys } from '../../apps/session-router/src/common/redis-keys.js';
import { redisSettings } from '../../apps/session-router/src/common/redis-topology.js';
import { loadRouterConfig } from '../../apps/session-router/src/config.js';
import { startRouter, type RunningRouter } from '../../apps/session-router/src/app.js';

/** Where a test router runs: NATS, Redis and the namespace of its suite. */
export interface RouterPlace {
  natsUrl: string;
  redisUrl: string;
  namespace: string;
}

/** A real router in-process, with the test secrets and keys and quiet logs; `env` adds or overrides. */
export async function startTestRouter(
  place: RouterPlace,
  env: Record<string, string> = {},
): Promise<RunningRouter> {
  return startRouter(
    loadRouterConfig({
      TETHER_NATS_URL: place.natsUrl,
      TETHER_REDIS_URL: place.redisUrl,
      TETHER_NAMESPACE: place.namespace,
      TETHER_EDGE_SECRET: TEST_EDGE_SECRET,
      TETHER_JOURNAL_KEY: TEST_JOURNAL_KEY,
      TETHER_LOG_LEVEL: 'error',
      TETHER_METRICS_PORT: '0',
      ...env,
    }),
  );
}

export interface Suite {
  namespace: string;
  subjects: Subjects;
  nc: NatsConnection;
  /** The suite's own client on the Redis the routers use (a Cluster client on a cluster). */
  redis: RedisClient;
  redisKeys: RedisKeys;
  /** Every key matching `pattern` on every master (KEYS only sees one node of a cluster). */
  keys(pattern: string): Promise<string[]>;
  routers: RunningRouter[];
  startRouter(env?: Record<string, string>): Promise<RunningRouter>;
  cleanup(): Promise<void>;
}

let redisUrlOverride: string | undefined;
let redisEnvOverride: Record<string, string> = {};

/**
 * Makes every suite created from now on in this test file use `url` (a `redis-cluster://` or
 * `redis-sentinel://` one) instead of the shared Redis: test/integration/router/cluster.test.ts
 * runs the router suites against a real Redis Cluster this way.
 */
export function useRedisForSuites(url: string | undefined, env: Record<string, string> = {}): void {
  redisUrlOverride = url;
  // Further TETHER_REDIS_* variables (an ACL user, a password file) for the suite and its routers.
  redisEnvOverride = url === undefined ? {} : env;
}

export async function createSuite(label: string): Promise<Suite> {
  const shared = await testServices();
  const services = { ...shared, redisUrl: redisUrlOverride ?? shared.redisUrl };
  const namespace = uniqueNamespace(label);
  const subjects = new Subjects(namespace);
  const nc = await connectNats({ servers: services.natsUrl, name: `test-${label}` });
  const credentials = answerEdgeCredentials(nc, subjects);
  // Connection errors while a node is killed are expected; commands still fail loudly.
  const redisEnv = { ...redisEnvOverride };
  const redis = createRedisClient(redisSettings({ ...redisEnv, TETHER_REDIS_URL: services.redisUrl }), {
    onError: () => undefined,
  });
  const keys = (pattern: string) => scanKeys(redis, pattern);
  const routers: RunningRouter[] = [];
  return {
    namespace,
    subjects,
    nc,
    redis,
    redisKeys: new RedisKeys(namespace),
    keys,
    routers,
    async startRouter(env = {}) {
      const router = await startTestRouter(
        { natsUrl: services.natsUrl, redisUrl: services.redisUrl, namespace },
        { ...redisEnv, ...env },
      );
      routers.push(router);
      return router;
    },
    async cleanup() {
      await Promise.allSettled(routers.map((router) => router.close()));
      credentials.unsubscribe();
      try {
        // One DEL per key: on a cluster the suite's keys live in many slots.
        await Promise.all((await keys(`${namespace}:*`)).map((key) => redis.del(key)));
        try {
          const jsm = await jetstreamManager(nc);
          await jsm.streams.delete(subjects.sessionsStream);
        } catch {
          // The suite never created it.
        }
      } finally {
        // Closed even when a killed Redis node failed the key cleanup, so jest can exit.
        await redis.quit().catch(() => redis.disconnect());
        await nc.drain();
      }
    },
  };
}

export type EdgeBehaviour = (rpc: EdgeAgentRPCRequest, msg: Msg) => EdgeAgentResult | Uint8Array | unknown;

/** A raw responder on one edge's RPC subject that records every request it gets. */
export function fakeEdge(suite: Suite, edgeId: string, behaviour: EdgeBehaviour = () => result('ok')) {
  const requests: EdgeAgentRPCRequest[] = [];
  const subscription = suite.nc.subscribe(suite.subjects.edgeRpc(edgeId), {
    callback: (error, msg) => {
      if (error) return;
      // The router's liveness probe (an empty request): every edge answers it at once.
      if (msg.data.length === 0) {
        msg.respond(encodeJson(result('invalid_request')));
        return;
      }
      const rpc = decodeJson<EdgeAgentRPCRequest>(msg.data);
      requests.push(rpc);
      const reply = behaviour(rpc, msg);
      msg.respond(reply instanceof Uint8Array ? reply : encodeJson(reply));
    },
  });
  return {
    requests,
    actions: () => requests.map((rpc) => rpc.request.action),
    stop: () => subscription.unsubscribe(),
    /** Resolves once the subscription is registered with the server. */
    ready: () => suite.nc.flush(),
  };
}

export function sessionUpdate(
  fields: Partial<SessionUpdate> & { session_id: string; revision: number },
): SessionUpdate {
  const edgeId = fields.edge_id ?? '101';
  return {
    edge_id: edgeId,
    edge_token: edgeToken(TEST_EDGE_SECRET, edgeId),
    actor_id: 'user-1',
    emitted_at: Date.now(),
    snapshot: result('ok', { session_id: fields.session_id, revision: fields.revision }),
    ...fields,
  };
}

/** How router suites poll (with `pollUntil` from test/support): things settle within 10 s. */
export const ROUTER_POLL = { timeoutMs: 10_000, intervalMs: 50 };

/** A fresh 32-hex session id. */
export function sessionId(): string {
  return randomBytes(16).toString('hex');
}
