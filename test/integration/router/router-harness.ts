// Shared pieces of the router suites: real routers on a suite namespace, a raw NATS responder
// standing in for an edge, and cleanup of everything the suite created.
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import {
  edgeToken,
  result,
  Subjects,
  type EdgeAgentRPCRequest,
  type EdgeAgentResult,
  type SessionUpdate,
} from '#contracts';
import { connectNats, decodeJson, encodeJson } from '#messaging';
import { answerEdgeCredentials, testServices, uniqueNamespace, TEST_JOURNAL_KEY } from '#test-support';
import { loadRouterConfig } from '../../../apps/session-router/src/config.js';
import { startRouter, type RunningRouter } from '../../../apps/session-router/src/router.js';

export const EDGE_SECRET = 'router-suite-edge-secret-0123456789';

export interface Suite {
  namespace: string;
  subjects: Subjects;
  nc: NatsConnection;
  redis: Redis;
  routers: RunningRouter[];
  startRouter(env?: Record<string, string>): Promise<RunningRouter>;
  cleanup(): Promise<void>;
}

export async function createSuite(label: string): Promise<Suite> {
  const services = await testServices();
  const namespace = uniqueNamespace(label);
  const subjects = new Subjects(namespace);
  const nc = await connectNats({ servers: services.natsUrl, name: `test-${label}` });
  const credentials = answerEdgeCredentials(nc, subjects);
  const redis = new Redis(services.redisUrl);
  const routers: RunningRouter[] = [];
  return {
    namespace,
    subjects,
    nc,
    redis,
    routers,
    async startRouter(env = {}) {
      const config = loadRouterConfig({
        TETHER_NATS_URL: services.natsUrl,
        TETHER_REDIS_URL: services.redisUrl,
        TETHER_NAMESPACE: namespace,
        TETHER_EDGE_SECRET: EDGE_SECRET,
        TETHER_JOURNAL_KEY: TEST_JOURNAL_KEY,
        TETHER_LOG_LEVEL: 'error',
        ...env,
      });
      const router = await startRouter(config);
      routers.push(router);
      return router;
    },
    async cleanup() {
      await Promise.allSettled(routers.map((router) => router.close()));
      credentials.unsubscribe();
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await redis.scan(cursor, 'MATCH', `${namespace}:*`, 'COUNT', 1000);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== '0');
      if (keys.length > 0) await redis.del(...keys);
      try {
        const jsm = await jetstreamManager(nc);
        await jsm.streams.delete(subjects.sessionsStream);
      } catch {
        // The suite never created it.
      }
      await redis.quit();
      await nc.drain();
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
    edge_token: edgeToken(EDGE_SECRET, edgeId),
    actor_id: 'user-1',
    emitted_at: Date.now(),
    snapshot: result('ok', { session_id: fields.session_id, revision: fields.revision }),
    ...fields,
  };
}

/** Polls `check` until it holds or the bound passes; returns the last value. */
export async function eventually<T>(
  check: () => Promise<T> | T,
  accept: (value: T) => boolean,
  boundMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + boundMs;
  let value = await check();
  while (!accept(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await check();
  }
  return value;
}

/** A fresh 32-hex session id. */
export function sessionId(): string {
  return randomBytes(16).toString('hex');
}
