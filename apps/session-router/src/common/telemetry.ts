// The router's ops endpoints and gauges: leases (a ZCARD per index shard), watches waiting in this process,
// and edges online (a bounded SCAN of presence keys), all read only when /metrics is scraped.
import {
  METRIC,
  exportSubmissionSettlements,
  natsCheck,
  redisCheck,
  registerGauge,
  startOpsServer,
  type OpsServer,
} from '#telemetry';
import type { RouterConfig } from '../config.js';
import type { RunningRouter } from '../app.js';
import { LeasesRepository } from '../leases/leases.repository.js';
import { WatchService } from '../watch/watch.service.js';
import { scanKeys, type RedisClient } from './redis-client.js';
import { RedisKeys } from './redis-keys.js';
import { REDIS } from './tokens.js';

/** Keys asked for per SCAN step, and steps per scrape: a scrape never walks an unbounded keyspace. */
const PRESENCE_SCAN_COUNT = 1_000;
const PRESENCE_SCAN_MAX_STEPS = 100;

/** Presence keys live on every master of a Cluster (one per edge): each node is scanned. */
async function countPresence(redis: RedisClient, pattern: string): Promise<number> {
  return (await scanKeys(redis, pattern, PRESENCE_SCAN_COUNT, PRESENCE_SCAN_MAX_STEPS)).length;
}

export function startRouterTelemetry(router: RunningRouter, config: RouterConfig): Promise<OpsServer> {
  const redis = router.app.get<RedisClient>(REDIS);
  const keys = new RedisKeys(config.namespace);
  const watch = router.app.get(WatchService);
  const leases = router.app.get(LeasesRepository);
  registerGauge(METRIC.leases, 'Sessions holding a lease (due in the reaper set, every shard).', () =>
    leases.count(),
  );
  registerGauge(METRIC.watchers, 'Watches waiting in this router process.', () => watch.waiting);
  registerGauge(METRIC.connectorsOnline, 'Edges with a live presence key.', () =>
    countPresence(redis, keys.presence('*')),
  );
  exportSubmissionSettlements();
  return startOpsServer({
    service: 'session-router',
    port: config.metricsPort,
    checks: { nats: natsCheck(router.nc), redis: redisCheck(redis) },
  });
}
