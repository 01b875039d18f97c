// The router on a real Redis Cluster (issue 13): three masters, three replicas on loopback ports
// 7100-7105, started here and stopped in afterAll. First the Redis-heavy router suites run once
// more against it, unchanged: a script or pipeline touching keys of two slots fails there with
// CROSSSLOT, so they fail on the first such command. Then a master is killed (kill -9) under
// continuous updates through two router replicas: its replica takes over and the journal holds
// every acknowledged row exactly once. The recovery figures are printed (docs/scaling.md "Redis"),
// never asserted.
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { createRedisClient } from '../../../apps/session-router/src/common/redis-client.js';
import { RedisKeys } from '../../../apps/session-router/src/common/redis-keys.js';
import type { RouterConfig } from '../../../apps/session-router/src/config.js';
import { JournalAppendLock } from '../../../apps/session-router/src/journal-sequencer/journal-append-lock.js';
import { startRedisCluster } from '../../support/redis-cluster.js';
import { infoFields } from '../../support/redis-processes.js';
import { trafficThroughFailover } from './redis-failover.js';
import { createSuite, sessionId, useRedisForSuites } from '../../support/router.js';

jest.setTimeout(60_000);

const cluster = await startRedisCluster(7100);
afterAll(async () => {
  useRedisForSuites(undefined);
  await cluster.stop();
});
useRedisForSuites(cluster.url);

// Registered in this file, in this order, each with its own namespace and routers.
await import('./journal-sequencer.test.js');
await import('./operations.test.js');
await import('./leases.test.js');
await import('./presence.test.js');
await import('./watch.test.js');

/** The replica of the master that serves `key`'s slot, as CLUSTER SLOTS names it. */
async function replicaOf(key: string): Promise<Redis> {
  const seed = new Redis({ port: 7100, lazyConnect: true });
  try {
    const slot = Number(await seed.call('CLUSTER', 'KEYSLOT', key));
    const ranges = (await seed.call('CLUSTER', 'SLOTS')) as [number, number, ...[string, number][]][];
    const [, , , replica] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
    return new Redis({ host: replica![0], port: replica![1] });
  } finally {
    seed.disconnect();
  }
}

// Redis replicates asynchronously: a master that dies right after granting the append lock must
// not leave a promoted replica that never saw it (journal-append-lock.ts).
describe('the journal append lock on a Redis Cluster', () => {
  it('is on the slot replica before the append runs; with the replica stalled it goes ahead and says so', async () => {
    const nodes = cluster.nodes.map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) }));
    const client = createRedisClient({ mode: 'cluster', nodes });
    const keys = new RedisKeys('appendlock');
    const config = { redis: { mode: 'cluster', nodes } } as unknown as RouterConfig;
    const lock = new JournalAppendLock(client, keys, config);
    const session = sessionId();
    const replica = await replicaOf(keys.appendLock(session));
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      await replica.call('READONLY');
      const seen = await lock.holding(
        session,
        () => new Error('lock timeout'),
        () => replica.get(keys.appendLock(session)),
      );
      expect(seen).toMatch(/^[0-9a-f]{24}$/);
      expect(warned).not.toHaveBeenCalled();

      // A replica that cannot acknowledge (stopped): the append still runs, and the router says once
      // that its locks are as safe as the master alone.
      const pid = Number(infoFields(String(await replica.call('INFO', 'server'))).get('process_id'));
      process.kill(pid, 'SIGSTOP');
      let ran = 0;
      try {
        for (let round = 0; round < 2; round += 1) {
          await lock.holding(
            session,
            () => new Error('lock timeout'),
            () => Promise.resolve((ran += 1)),
          );
        }
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      expect(ran).toBe(2);
      expect(warned.mock.calls.map(([message]) => String(message))).toEqual([
        expect.stringContaining('granted without a replica confirming it'),
      ]);
    } finally {
      warned.mockRestore();
      replica.disconnect();
      client.disconnect();
    }
  });
});

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
