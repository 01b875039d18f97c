// A real Sentinel set-up on loopback (issue 13): one master, one replica (`--replicaof`) and three
// sentinels (quorum 2) watching them. The suite that starts it stops it in afterAll.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { POLL_MS, RedisProcesses, cli, ephemeralArgs, infoFields } from './redis-processes.js';
import { waitUntil } from './polling.js';

export const SENTINEL_MASTER_NAME = 'tethermain';
const QUORUM = 2;
const DOWN_AFTER_MS = 1_000;
const FAILOVER_TIMEOUT_MS = 3_000;
const READY_TIMEOUT_MS = 30_000;
const PROMOTION_TIMEOUT_MS = 30_000;

/**
 * An ACL user the data nodes require for every key: the default user (the sentinels, replication
 * and this harness's probes) may run commands but reach no key, so a client that does not log in
 * as `user` gets NOPERM.
 */
export interface SentinelAcl {
  user: string;
  password: string;
}

function aclArgs(acl: SentinelAcl | undefined): string[] {
  if (!acl) return [];
  return [
    '--user',
    'default',
    'on',
    'nopass',
    'resetkeys',
    '&*',
    '+@all',
    '--user',
    acl.user,
    'on',
    `>${acl.password}`,
    '~*',
    '&*',
    '+@all',
  ];
}

export interface RedisSentinelHarness {
  /** `redis-sentinel://127.0.0.1:26200,…?name=…` for TETHER_REDIS_URL. */
  url: string;
  sentinels: string[];
  /** kill -9 the current master; returns its port. */
  killMaster(): Promise<number>;
  /** Resolves once the sentinels name a live master other than the killed one. */
  waitForFailover(): Promise<void>;
  stop(): Promise<void>;
}

async function masterPort(sentinelPort: number): Promise<number | null> {
  const reply = await cli(sentinelPort, 'SENTINEL', 'get-master-addr-by-name', SENTINEL_MASTER_NAME);
  const port = Number(reply.split('\n')[1]);
  return Number.isInteger(port) && port > 0 ? port : null;
}

/** The sentinels' view of the master: how many replicas and other sentinels they know. */
async function sentinelReady(sentinelPort: number, sentinelCount: number): Promise<boolean> {
  const lines = (await cli(sentinelPort, 'SENTINEL', 'master', SENTINEL_MASTER_NAME)).split('\n');
  const field = (name: string) => Number(lines[lines.indexOf(name) + 1]);
  return field('num-slaves') >= 1 && field('num-other-sentinels') >= sentinelCount - 1;
}

export async function startRedisSentinel(
  masterPortNumber = 7200,
  sentinelBasePort = 26200,
  acl?: SentinelAcl,
): Promise<RedisSentinelHarness> {
  const replicaPort = masterPortNumber + 1;
  const sentinelPorts = [0, 1, 2].map((index) => sentinelBasePort + index);
  const processes = new RedisProcesses('redis-sentinel');
  const live = new Set([masterPortNumber, replicaPort]);
  try {
    await processes.start(masterPortNumber, [
      ...ephemeralArgs(masterPortNumber, processes.dirOf(masterPortNumber)),
      ...aclArgs(acl),
    ]);
    await processes.start(replicaPort, [
      ...ephemeralArgs(replicaPort, processes.dirOf(replicaPort)),
      ...aclArgs(acl),
      '--replicaof',
      '127.0.0.1',
      String(masterPortNumber),
    ]);
    await waitUntil(
      async () =>
        infoFields(await cli(replicaPort, 'INFO', 'replication')).get('master_link_status') === 'up',
      'the replica to sync',
      { timeoutMs: READY_TIMEOUT_MS, intervalMs: POLL_MS },
    );
    for (const port of sentinelPorts) {
      // Sentinel rewrites its configuration file (it records what it learns), so each gets its own.
      const conf = join(processes.dirOf(port), 'sentinel.conf');
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${processes.dirOf(port)}`,
          `sentinel monitor ${SENTINEL_MASTER_NAME} 127.0.0.1 ${masterPortNumber} ${QUORUM}`,
          `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${SENTINEL_MASTER_NAME} ${FAILOVER_TIMEOUT_MS}`,
          `sentinel parallel-syncs ${SENTINEL_MASTER_NAME} 1`,
          '',
        ].join('\n'),
      );
      await processes.start(port, [conf, '--sentinel']);
    }
    await waitUntil(
      async () =>
        (await Promise.all(sentinelPorts.map((port) => sentinelReady(port, sentinelPorts.length)))).every(
          Boolean,
        ),
      'every sentinel to know the replica and the other sentinels',
      { timeoutMs: READY_TIMEOUT_MS, intervalMs: POLL_MS },
    );
  } catch (error) {
    await processes.stop();
    throw error;
  }
  const sentinels = sentinelPorts.map((port) => `127.0.0.1:${port}`);
  let killed: number | null = null;
  return {
    sentinels,
    url: `redis-sentinel://${sentinels.join(',')}?name=${SENTINEL_MASTER_NAME}`,
    async killMaster() {
      const port = await masterPort(sentinelPorts[0]!);
      if (port === null || !live.has(port)) throw new Error('the sentinels name no live master');
      processes.kill(port);
      live.delete(port);
      killed = port;
      return port;
    },
    async waitForFailover() {
      await waitUntil(
        async () => {
          const ports = await Promise.all(sentinelPorts.map(masterPort));
          const port = ports[0];
          if (port === null || port === undefined || port === killed || !live.has(port)) return false;
          return (
            ports.every((other) => other === port) &&
            infoFields(await cli(port, 'INFO', 'replication')).get('role') === 'master'
          );
        },
        'the sentinels to promote the replica',
        { timeoutMs: PROMOTION_TIMEOUT_MS, intervalMs: POLL_MS },
      );
    },
    stop: () => processes.stop(),
  };
}
