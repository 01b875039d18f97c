import { Limits, result } from '#contracts';
import { requestService } from '#messaging';
import { createSuite, ROUTER_POLL, fakeEdge, sessionId, type Suite } from '../../support/router.js';
import { pollUntil } from '#test-support';

const EDGE = '501';

describe('router idle leases', () => {
  let suite: Suite;
  let edge: ReturnType<typeof fakeEdge>;

  beforeAll(async () => {
    suite = await createSuite('leases');
    edge = fakeEdge(suite, EDGE, (rpc) =>
      result(rpc.request.action === 'expire' ? 'expired' : 'ok', { session_id: rpc.request.session_id }),
    );
    await edge.ready();
    for (let i = 0; i < 3; i += 1) await suite.startRouter({ TETHER_LEASE_REAPER_INTERVAL_MS: '100' });
  });
  afterAll(async () => {
    edge.stop();
    await suite.cleanup();
  });

  /** The lease index shard the router files the session under. */
  const leasesKey = (sid: string) => suite.redisKeys.leases(suite.redisKeys.leaseShard(sid));
  const leaseKey = (sid: string) => `${suite.namespace}:{${sid}}:lease`;
  /** A lease as a user action would have left it, idle since long enough to be due. */
  const seedDueLease = async (sid: string, edgeId = EDGE, running = false, index = leasesKey(sid)) => {
    const past = Date.now() - Limits.TRANSIENT_SESSION_IDLE_MS - 1_000;
    await suite.redis.hset(leaseKey(sid), {
      created: past,
      touched: past,
      saved: '0',
      edge: edgeId,
      owner: 'user-1',
      access: '',
      attempts: '0',
    });
    if (running) await suite.redis.hset(`${suite.namespace}:{${sid}}:meta`, { running: '1', edge: edgeId });
    await suite.redis.zadd(index, past + Limits.TRANSIENT_SESSION_IDLE_MS, sid);
  };

  // Snapshot reads not renewing is pinned in test/integration/reference/router-leases.test.ts.
  it('records a transient lease with its owner and edge on a user action', async () => {
    const sid = sessionId();
    await requestService(
      suite.nc,
      suite.subjects,
      'routerEdgeAgent',
      { actor_id: 'user-1', request: { edge_id: EDGE, action: 'poll', session_id: sid } },
      { timeoutMs: 10_000 },
    );
    const score = Number(await suite.redis.zscore(leasesKey(sid), sid));
    expect(score).toBeGreaterThan(Date.now());
    expect(score).toBeLessThanOrEqual(Date.now() + Limits.TRANSIENT_SESSION_IDLE_MS);
    expect(await suite.redis.hgetall(leaseKey(sid))).toMatchObject({
      edge: EDGE,
      owner: 'user-1',
      saved: '0',
    });
  });

  it('expires each of 200 due sessions exactly once across 3 replicas, and never a running one', async () => {
    const due = Array.from({ length: 200 }, () => sessionId());
    const running = Array.from({ length: 3 }, () => sessionId());
    await Promise.all([
      ...due.map((sid) => seedDueLease(sid)),
      ...running.map((sid) => seedDueLease(sid, EDGE, true)),
    ]);

    const expired = () => edge.requests.filter((rpc) => rpc.request.action === 'expire');
    await pollUntil(
      () => expired().length,
      (count) => count >= due.length,
      { ...ROUTER_POLL, timeoutMs: 20_000 },
    );
    // Let any double claim show up before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const counts = new Map<string, number>();
    for (const rpc of expired())
      counts.set(rpc.request.session_id!, (counts.get(rpc.request.session_id!) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...due].sort());
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
    expect(expired()[0]).toEqual({
      version: 1,
      actor_id: 'user-1',
      request: { edge_id: EDGE, action: 'expire', session_id: expired()[0]!.request.session_id },
    });
    for (const sid of due) {
      expect(await suite.redis.zscore(leasesKey(sid), sid)).toBeNull();
      expect(await suite.redis.exists(leaseKey(sid))).toBe(0);
    }
    for (const sid of running) {
      expect(Number(await suite.redis.zscore(leasesKey(sid), sid))).toBeGreaterThan(Date.now());
    }
  }, 30_000);

  it('keeps the lease of a session whose edge is offline for a later retry', async () => {
    const sid = sessionId();
    await seedDueLease(sid, '599');
    const attempts = await pollUntil(
      async () => Number(await suite.redis.hget(leaseKey(sid), 'attempts')),
      (count) => count >= 1,
      ROUTER_POLL,
    );
    expect(attempts).toBe(1);
    expect(Number(await suite.redis.zscore(leasesKey(sid), sid))).toBeGreaterThan(Date.now());
  });

  it('drains the single lease index older versions wrote into the shards, expiring what is due once', async () => {
    const legacy = `${suite.namespace}:leases`;
    const due = Array.from({ length: 5 }, () => sessionId());
    const later = sessionId();
    await Promise.all(due.map((sid) => seedDueLease(sid, EDGE, false, legacy)));
    const laterDue = Date.now() + 60 * 60_000;
    await suite.redis.zadd(legacy, laterDue, later);

    const expiredOnce = () => {
      const expired = edge.requests.filter(
        (rpc) => rpc.request.action === 'expire' && due.includes(rpc.request.session_id!),
      );
      return Promise.resolve(expired.map((rpc) => rpc.request.session_id!).sort());
    };
    expect(await pollUntil(expiredOnce, (ids) => ids.length >= due.length, ROUTER_POLL)).toEqual(
      [...due].sort(),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await expiredOnce()).toEqual([...due].sort());
    expect(await suite.redis.exists(legacy)).toBe(0);
    expect(Number(await suite.redis.zscore(leasesKey(later), later))).toBe(laterDue);
  });

  it('spreads the lease index over its shards', () => {
    const shards = new Set(Array.from({ length: 400 }, () => suite.redisKeys.leaseShard(sessionId())));
    expect(shards.size).toBe(16);
  });
});
