// The router on a Sentinel-managed Redis (issue 13): a master on 7200, its replica on 7201 and
// three sentinels on 26200-26202 (quorum 2), started here and stopped in afterAll. The router
// suite of session updates runs against it unchanged; then the master is killed (kill -9) under
// continuous updates through two router replicas, the sentinels promote the replica, and the
// routers carry on. Figures are printed (docs/scaling.md "Redis"), never asserted.
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { startRedisSentinel } from '../../support/redis-sentinel.js';
import { trafficThroughFailover } from './redis-failover.js';
import { createSuite, useRedisForSuites } from './router-harness.js';

jest.setTimeout(60_000);

const sentinel = await startRedisSentinel(7200, 26200);
afterAll(async () => {
  useRedisForSuites(undefined);
  await sentinel.stop();
});
useRedisForSuites(sentinel.url);

await import('./session-update.test.js');

describe('a Sentinel master killed under traffic', () => {
  it('keeps serving once the sentinels promote the replica, and loses no acknowledged update', async () => {
    const suite = await createSuite('sentinelkill');
    try {
      await suite.startRouter();
      await suite.startRouter();
      const report = await trafficThroughFailover(suite, sentinel);
      console.log(`Redis Sentinel master kill: ${JSON.stringify(report)}`);
      expect(report.lostOrDuplicated).toEqual([]);
      expect(report.acked).toBeGreaterThan(0);
      expect(Number.isFinite(report.allSessionsMs)).toBe(true);
    } finally {
      await suite.cleanup();
    }
  });
});
