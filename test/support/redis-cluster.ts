// A real Redis Cluster of three masters and three replicas on loopback (issue 13): six
// `redis-server --cluster-enabled yes` processes joined by `redis-cli --cluster create`. The
// suite that starts it stops it in afterAll (every process killed, the directory removed).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { POLL_MS, RedisProcesses, cli, ephemeralArgs, infoFields } from './redis-processes.js';
import { waitUntil } from './polling.js';

const run = promisify(execFile);

/** Small, so a killed master's replica is promoted within a few seconds on a busy machine. */
const NODE_TIMEOUT_MS = 2_000;
const READY_TIMEOUT_MS = 30_000;
const FAILOVER_TIMEOUT_MS = 30_000;

export interface RedisClusterHarness {
  /** `127.0.0.1:<port>` of every node, masters and replicas. */
  nodes: string[];
  /** `redis-cluster://127.0.0.1:7100,…` for TETHER_REDIS_URL. */
  url: string;
  /** kill -9 one master that owns slots; returns its port. */
  killMaster(): Promise<number>;
  /** Resolves once every slot is served by a live master and every live node says `cluster_state:ok`. */
  waitForFailover(): Promise<void>;
  stop(): Promise<void>;
}

interface ClusterNode {
  port: number;
  master: boolean;
  failed: boolean;
  hasSlots: boolean;
}

/** CLUSTER NODES as seen from `port`. */
async function clusterNodes(port: number): Promise<ClusterNode[]> {
  const text = await cli(port, 'CLUSTER', 'NODES');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [, address = '', flags = '', , , , , , ...slots] = line.split(' ');
      return {
        port: Number(address.split('@')[0]!.split(':')[1]),
        master: flags.split(',').includes('master'),
        failed: /fail/.test(flags),
        hasSlots: slots.length > 0,
      };
    });
}

async function clusterOk(port: number): Promise<boolean> {
  return infoFields(await cli(port, 'CLUSTER', 'INFO')).get('cluster_state') === 'ok';
}

/** Every replica's link to its master is up, so a killed master's writes exist on its replica. */
async function replicasSynced(ports: number[]): Promise<boolean> {
  for (const port of ports) {
    const info = infoFields(await cli(port, 'INFO', 'replication'));
    if (info.get('role') === 'slave' && info.get('master_link_status') !== 'up') return false;
  }
  return true;
}

/** Six nodes on `basePort`…`basePort + 5` (bus ports +10000), three masters with a replica each. */
export async function startRedisCluster(basePort = 7100): Promise<RedisClusterHarness> {
  const ports = Array.from({ length: 6 }, (_, index) => basePort + index);
  const processes = new RedisProcesses('redis-cluster');
  const live = new Set(ports);
  try {
    await Promise.all(
      ports.map((port) =>
        processes.start(port, [
          ...ephemeralArgs(port, processes.dirOf(port)),
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          String(NODE_TIMEOUT_MS),
        ]),
      ),
    );
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ],
      { timeout: READY_TIMEOUT_MS },
    );
    await waitUntil(
      async () => (await Promise.all(ports.map(clusterOk))).every(Boolean) && (await replicasSynced(ports)),
      'cluster_state:ok on every node',
      { timeoutMs: READY_TIMEOUT_MS, intervalMs: POLL_MS },
    );
  } catch (error) {
    await processes.stop();
    throw error;
  }
  const nodes = ports.map((port) => `127.0.0.1:${port}`);
  return {
    nodes,
    url: `redis-cluster://${nodes.join(',')}`,
    async killMaster() {
      const view = await clusterNodes([...live][0]!);
      const master = view.find((node) => node.master && node.hasSlots && !node.failed && live.has(node.port));
      if (!master) throw new Error('no live master owns slots');
      processes.kill(master.port);
      live.delete(master.port);
      return master.port;
    },
    async waitForFailover() {
      await waitUntil(
        async () => {
          const alive = [...live];
          if (!(await Promise.all(alive.map(clusterOk))).every(Boolean)) return false;
          const view = await clusterNodes(alive[0]!);
          return view.every((node) => !(node.master && node.hasSlots && !live.has(node.port)));
        },
        'a replica to take over the killed master',
        { timeoutMs: FAILOVER_TIMEOUT_MS, intervalMs: POLL_MS },
      );
    },
    stop: () => processes.stop(),
  };
}
