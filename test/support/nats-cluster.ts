// A 3-node NATS cluster with JetStream on loopback for one suite: three nats-server processes,
// each with its own store folder, routed to the other two. A suite kills and restarts nodes
// (same ports, same store) and stops them all in afterAll, whatever happened before.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort } from './http.js';
import { sleep } from './polling.js';

export interface NatsCluster {
  /** One client URL per node. */
  urls: string[];
  /** Every node's URL, comma-separated (TETHER_NATS_URL). */
  url: string;
  /** The node's server name (`n1`..`n3`), as stream info reports leaders and replicas. */
  names: string[];
  /** SIGKILL node `i` (0-based); its store stays. */
  kill(i: number): Promise<void>;
  /** Starts node `i` again on its ports and store folder. */
  restart(i: number): Promise<void>;
  /** The node index of a server name from stream info (`cluster.leader`), or -1. */
  indexOf(name: string): number;
  running(i: number): boolean;
  /** Stops every node and removes the store folders. */
  stop(): Promise<void>;
  /** Recent output of every node, for a failing test. */
  output(): string;
}

const NODES = 3;
const CLUSTER_NAME = 'tether-test';
/** A fresh cluster elects its JetStream meta leader within seconds; a loaded CI box, longer. */
const READY_TIMEOUT_MS = 60_000;
const PROBE_STREAM = 'CLUSTER_READY_PROBE';

/**
 * Client and route ports: ephemeral by default, or from `TETHER_TEST_NATS_CLUSTER_PORT` (client
 * ports base..base+2, route ports base+2000..) where a machine's port ranges are shared out.
 */
async function clusterPorts(): Promise<{ client: number[]; route: number[] }> {
  const base = Number(process.env.TETHER_TEST_NATS_CLUSTER_PORT ?? '');
  if (Number.isInteger(base) && base > 0) {
    const range = [0, 1, 2].map((offset) => base + offset);
    return { client: range, route: range.map((port) => port + 2000) };
  }
  const client: number[] = [];
  const route: number[] = [];
  for (let i = 0; i < NODES; i += 1) {
    client.push(await freePort());
    route.push(await freePort());
  }
  return { client, route };
}

/** Resolves once JetStream can place a 3-replica stream: the meta leader is elected, every node is in. */
async function waitForJetStream(url: string, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastError: unknown;
  while (Date.now() < deadline) {
    const nc = await connect({ servers: url, timeout: 2_000 }).catch((error: unknown) => {
      lastError = error;
      return undefined;
    });
    if (nc) {
      try {
        const jsm = await jetstreamManager(nc, { timeout: 2_000 });
        await jsm.streams.add({ name: PROBE_STREAM, subjects: ['cluster.ready.probe'], num_replicas: NODES });
        await jsm.streams.delete(PROBE_STREAM);
        return;
      } catch (error) {
        lastError = error;
      } finally {
        await nc.close();
      }
    }
    await sleep(250);
  }
  throw new Error(`The NATS cluster's JetStream was not ready (${String(lastError)}).\n${output()}`);
}

export async function startNatsCluster(): Promise<NatsCluster> {
  const ports = await clusterPorts();
  const root = mkdtempSync(join(tmpdir(), 'tether-nats-cluster-'));
  const names = ports.client.map((_, i) => `n${i + 1}`);
  const urls = ports.client.map((port) => `nats://127.0.0.1:${port}`);
  const servers: (ChildProcess | undefined)[] = [];
  const logs: string[] = [];

  const args = (i: number) => [
    '-js',
    '-a',
    '127.0.0.1',
    '-p',
    String(ports.client[i]),
    '--server_name',
    names[i]!,
    '--cluster_name',
    CLUSTER_NAME,
    '--cluster',
    `nats://127.0.0.1:${ports.route[i]}`,
    '--routes',
    ports.route
      .filter((_, j) => j !== i)
      .map((port) => `nats://127.0.0.1:${port}`)
      .join(','),
    '-sd',
    join(root, names[i]!),
  ];

  const start = async (i: number) => {
    const server = spawn('nats-server', args(i), { stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (chunk: Buffer) => {
      logs.push(`[${names[i]}] ${chunk.toString()}`);
      if (logs.length > 400) logs.splice(0, 200);
    };
    server.stdout?.on('data', collect);
    server.stderr?.on('data', collect);
    servers[i] = server;
    await once(server, 'spawn');
  };

  const halt = async (i: number, signal: NodeJS.Signals) => {
    const server = servers[i];
    servers[i] = undefined;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = once(server, 'exit');
    server.kill(signal);
    await exited;
  };

  const cluster: NatsCluster = {
    urls,
    url: urls.join(','),
    names,
    kill: (i) => halt(i, 'SIGKILL'),
    restart: async (i) => {
      await halt(i, 'SIGKILL');
      await start(i);
    },
    indexOf: (name) => names.indexOf(name),
    running: (i) => servers[i] !== undefined,
    stop: async () => {
      await Promise.all(names.map((_, i) => halt(i, 'SIGTERM')));
      rmSync(root, { recursive: true, force: true });
    },
    output: () => logs.join(''),
  };
  try {
    for (let i = 0; i < NODES; i += 1) await start(i);
    await waitForJetStream(cluster.url, cluster.output);
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}
