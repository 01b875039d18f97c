// What the journal suites run against: history in process (its own schema), router replicas on
// the same namespace, and one owner with an enrolled edge and access.
import { afterAll, beforeAll, jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { edgeToken, result, type EdgeAgentResult, type SessionUpdate } from '#contracts';
import { requestService } from '#messaging';
import { testServices, TEST_EDGE_SECRET } from '#test-support';
import type { RunningRouter } from '../../apps/session-router/src/app.js';
import { HARNESS_TIMEOUT_MS, SLOW_TEST_TIMEOUT_MS, startHarness, type HistoryHarness } from './history.js';
import { startTestRouter } from './router.js';

export { HARNESS_TIMEOUT_MS, sessionId, type HistoryHarness } from './history.js';

export interface JournalStackOptions {
  /** Router replicas (default 1). */
  replicas?: number;
  /** The routers' Redis (default the shared test Redis). */
  redisUrl?: string;
  /** Router settings beyond the test defaults. */
  routerEnv?: Record<string, string>;
}

export interface JournalStack {
  h: HistoryHarness;
  routers: RunningRouter[];
  /** The first replica. */
  router: RunningRouter;
  owner: string;
  edgeId: string;
  accessId: string;
  /** The owner's edge reporting `revision` of session `sid` (a snapshot with `snapshot`'s fields). */
  update(sid: string, revision: number, snapshot?: Partial<EdgeAgentResult>): SessionUpdate;
  /** Sends an update to the routers as an edge does; resolves with their ack (epoch, sequence). */
  send(update: SessionUpdate): ReturnType<typeof sendUpdate>;
  /** Stops the routers and history and removes the namespace's Redis keys. */
  close(): Promise<void>;
}

function sendUpdate(h: HistoryHarness, update: SessionUpdate) {
  return requestService(h.nc, h.subjects, 'routerSessionUpdate', update, { timeoutMs: 10_000 });
}

/** Sets the suite's test timeout for journal work (`factor` × the slow-test bound). */
export function journalSuiteTimeout(factor = 1): void {
  jest.setTimeout(SLOW_TEST_TIMEOUT_MS * factor);
}

export async function startJournalStack(
  label: string,
  owner: string,
  options: JournalStackOptions = {},
): Promise<JournalStack> {
  const h = await startHarness(label);
  const services = await testServices();
  const redisUrl = options.redisUrl ?? services.redisUrl;
  const place = { natsUrl: services.natsUrl, redisUrl, namespace: h.subjects.namespace };
  const routers: RunningRouter[] = [];
  const close = async (): Promise<void> => {
    await Promise.allSettled(routers.map((router) => router.close()));
    const redis = new Redis(redisUrl);
    const keys = await redis.keys(`${h.subjects.namespace}:*`).catch(() => []);
    if (keys.length > 0) await redis.del(...keys).catch(() => undefined);
    redis.disconnect();
    await h.close();
  };
  try {
    for (let i = 0; i < (options.replicas ?? 1); i += 1) {
      routers.push(await startTestRouter(place, options.routerEnv));
    }
    const { edgeId, accessId } = await h.enroll(owner);
    return {
      h,
      routers,
      router: routers[0]!,
      owner,
      edgeId,
      accessId,
      update: (sid, revision, snapshot = {}) => ({
        edge_id: edgeId,
        edge_token: edgeToken(TEST_EDGE_SECRET, edgeId),
        actor_id: owner,
        access_id: accessId,
        session_id: sid,
        revision,
        emitted_at: Date.now(),
        snapshot: result('ok', { session_id: sid, revision, ...snapshot }),
      }),
      send: (update) => sendUpdate(h, update),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * A suite's journal stack: sets the suite timeout and registers hooks that start the stack before
 * the suite's own and close it after them. Call it at file level, outside the suite's describe:
 * outer beforeAll hooks run before a describe's, outer afterAll hooks after. `options` is read
 * when the stack starts, so it may name a server a hook declared earlier started.
 */
export function useJournalStack(
  label: string,
  owner: string,
  options: () => JournalStackOptions = () => ({}),
): { readonly stack: JournalStack } {
  journalSuiteTimeout();
  let stack: JournalStack | undefined;
  beforeAll(async () => {
    stack = await startJournalStack(label, owner, options());
  }, HARNESS_TIMEOUT_MS);
  afterAll(() => stack?.close(), HARNESS_TIMEOUT_MS);
  return {
    get stack(): JournalStack {
      if (!stack) throw new Error('The journal stack is not up.');
      return stack;
    },
  };
}
