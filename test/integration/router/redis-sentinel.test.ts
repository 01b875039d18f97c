// The router on a Sentinel-managed Redis (issue 13): a master on 7200, its replica on 7201 and
// three sentinels on 26200-26202 (quorum 2), started here and stopped in afterAll. The router
// suite of session updates runs against it unchanged; then the master is killed (kill -9) under
// continuous updates through two router replicas, the sentinels promote the replica, and the
// routers carry on. Figures are printed (docs/scaling.md "Redis"), never asserted. The data nodes
// require an ACL user for every key; suites and routers log in with TETHER_REDIS_USERNAME and
// TETHER_REDIS_PASSWORD_FILE.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { cli } from '../../support/redis-processes.js';
import { startRedisSentinel } from '../../support/redis-sentinel.js';
import { trafficThroughFailover } from './redis-failover.js';
import { createSuite, useRedisForSuites } from '../../support/router.js';

jest.setTimeout(60_000);

const acl = { user: 'tether-router', password: 'sentinel-suite-password-0123456789' };
const secrets = mkdtempSync(join(tmpdir(), 'tether-redis-secret-'));
const passwordFile = join(secrets, 'password');
writeFileSync(passwordFile, `${acl.password}\n`, { mode: 0o600 });
const sentinel = await startRedisSentinel(7200, 26200, acl).catch((error: unknown) => {
  rmSync(secrets, { recursive: true, force: true });
  throw error;
});
afterAll(async () => {
  useRedisForSuites(undefined);
  await sentinel.stop();
  rmSync(secrets, { recursive: true, force: true });
});
useRedisForSuites(sentinel.url, {
  TETHER_REDIS_USERNAME: acl.user,
  TETHER_REDIS_PASSWORD_FILE: passwordFile,
});

describe('the Sentinel set-up', () => {
  it('refuses keys to a client that does not log in as the ACL user', async () => {
    expect(await cli(7200, 'SET', 'probe', '1')).toContain('NOPERM');
  });
});

await import('./journal-sequencer.test.js');

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
