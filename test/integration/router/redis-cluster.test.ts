// The router on a real Redis Cluster (issue 13): three masters, three replicas on loopback ports
// 7100-7105, started here and stopped in afterAll. First the Redis-heavy router suites run once
// more against it, unchanged: a script or pipeline touching keys of two slots fails there with
// CROSSSLOT, so they fail on the first such command. Then a master is killed (kill -9) under
// continuous updates through two router replicas: its replica takes over and the journal holds
// every acknowledged row exactly once. The recovery figures are printed (docs/scaling.md "Redis"),
// never asserted.
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { startRedisCluster } from '../../support/redis-cluster.js';
import { trafficThroughFailover } from './redis-failover.js';
import { createSuite, useRedisForSuites } from './router-harness.js';

jest.setTimeout(60_000);

const cluster = await startRedisCluster(7100);
afterAll(async () => {
  useRedisForSuites(undefined);
  await cluster.stop();
});
useRedisForSuites(cluster.url);

// Registered in this file, in this order, each with its own namespace and routers.
await import('./session-update.test.js');
await import('./operations.test.js');
await import('./leases.test.js');
await import('./presence.test.js');
await import('./watch.test.js');

describe('a Redis Cluster master killed under traffic', () => {
  it('keeps serving after the replica takes over, and loses no acknowledged update', async () => {
    const suite = await createSuite('clusterkill');
    try {
      await suite.startRouter();
      await suite.startRouter();
      const report = await trafficThroughFailover(suite, cluster);
      console.log(`Redis Cluster master kill: ${JSON.stringify(report)}`);
      expect(report.lostOrDuplicated).toEqual([]);
      expect(report.acked).toBeGreaterThan(0);
      expect(Number.isFinite(report.allSessionsMs)).toBe(true);
    } finally {
      await suite.cleanup();
    }
  });
});
