// A whole Tether for one benchmark run: the real services as child processes (scripts/stack
// launcher) in a fresh namespace and a fresh database, on this machine's NATS/Redis/Postgres.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import {
  createTestDatabase,
  freePort,
  LIMITS_OFF_ENV,
  signToken,
  uniqueNamespace,
  type TestDatabase,
} from '#test-support';
import { requestService } from '#messaging';
import { CLUSTERED_REPLICAS, Stack, type ServiceName } from '../../scripts/stack/launcher.js';
import { benchServices } from './env.js';
import { FakeEdge, opaqueId } from './fake-edge.js';

export const BENCH_JWT_SECRET = 'bench-jwt-secret-0123456789';
export const BENCH_EDGE_SECRET = 'bench-edge-secret-0123456789';

/** Eight cold starts sharing the machine's cores. */
const REPLICAS_READY_MS = 120_000;

export interface TetherOptions {
  label: string;
  /** Start the real edge connector (scripted agent); otherwise the run poses as edges itself. */
  edge: boolean;
  /** The scripted agent's rules (TETHER_SCRIPTED_SCRIPT). */
  script?: unknown;
  /** Write V8 CPU profiles of every service into this folder (node --cpu-prof). */
  profileDir?: string;
  /** Extra environment for every service. */
  env?: Record<string, string>;
  /**
   * The clustered set-up (bench/scaling.ts): these NATS and Redis instead of the machine's, which
   * the caller started and stops (so nothing of the run is cleaned from them here), and api ×2,
   * router ×3 and history ×2.
   */
  clustered?: { natsUrl: string; redisUrl: string };
}

export class BenchTether {
  readonly owner = `bench${Date.now() % 100000}`;
  stack!: Stack;
  token!: string;
  private database?: TestDatabase;
  private dir = mkdtempSync(join(tmpdir(), 'tether-bench-'));
  /** performance.now() when the first service was spawned (profiles start there). */
  spawnedAt = 0;
  /** `http://127.0.0.1:<port>` of `api-2` in the clustered set-up. */
  secondApiUrl?: string;
  /** Each replica's ops port (/readyz, /metrics) in the clustered set-up. */
  readonly opsPorts = new Map<ServiceName, number>();

  constructor(readonly options: TetherOptions) {}

  get databaseUrl(): string {
    if (!this.database) throw new Error('Tether is not up.');
    return this.database.url;
  }

  async up(): Promise<void> {
    const services = benchServices();
    this.database = await createTestDatabase(this.options.label);
    const edgeEnv: Record<string, string> = { TETHER_EDGE_ALLOW_ROOT: '1' };
    if (this.options.script !== undefined) {
      const scriptPath = join(this.dir, 'script.json');
      writeFileSync(scriptPath, JSON.stringify(this.options.script));
      edgeEnv.TETHER_SCRIPTED_SCRIPT = scriptPath;
    }
    const extraEnv: Record<string, string> = { ...LIMITS_OFF_ENV, ...this.options.env };
    if (this.options.profileDir) {
      extraEnv.NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${this.options.profileDir}`;
    }
    const clustered = this.options.clustered;
    const secondApiPort = clustered ? await freePort() : undefined;
    if (secondApiPort) this.secondApiUrl = `http://127.0.0.1:${secondApiPort}`;
    const serviceEnv: Partial<Record<ServiceName, Record<string, string>>> = {};
    if (clustered) {
      for (const name of CLUSTERED_REPLICAS) {
        this.opsPorts.set(name, await freePort());
        serviceEnv[name] = { TETHER_METRICS_PORT: String(this.opsPorts.get(name)) };
      }
      serviceEnv['api-2']!.TETHER_HTTP_PORT = String(secondApiPort);
    }
    this.stack = new Stack({
      natsUrl: clustered?.natsUrl ?? services.natsUrl,
      redisUrl: clustered?.redisUrl ?? services.redisUrl,
      ...(clustered && {
        secondApi: true,
        secondRouter: true,
        thirdRouter: true,
        secondHistory: true,
        serviceEnv,
      }),
      databaseUrl: this.database.url,
      namespace: uniqueNamespace(this.options.label),
      httpHost: '127.0.0.1',
      httpPort: await freePort(),
      jwtSecret: BENCH_JWT_SECRET,
      edgeSecret: BENCH_EDGE_SECRET,
      demoOwner: this.owner,
      agent: 'scripted',
      edgeDataDir: join(this.dir, 'edge'),
      extraEnv,
      edgeEnv,
      output: 'collect',
    });
    this.spawnedAt = performance.now();
    try {
      if (this.options.edge) {
        await this.stack.up();
        if (clustered) await this.replicasReady();
      } else {
        await this.stack.start('history');
        await this.stack.start('router');
        await this.stack.start('api');
        await this.stack.historyReady();
        await this.stack.enrollDemoEdge();
        await Promise.all([this.stack.routerReady(), this.stack.apiReady()]);
      }
    } catch (error) {
      await this.down();
      throw error;
    }
    this.token = await signToken(BENCH_JWT_SECRET, this.owner);
  }

  /** Every replica answers /readyz (the stack waits only for the first of each). */
  private async replicasReady(): Promise<void> {
    const deadline = performance.now() + REPLICAS_READY_MS;
    for (const name of CLUSTERED_REPLICAS) {
      const url = `http://127.0.0.1:${this.opsPorts.get(name)}/readyz`;
      while (
        (await fetch(url).then(
          (reply) => reply.status,
          () => 0,
        )) !== 200
      ) {
        if (performance.now() > deadline) throw new Error(`${name} not ready\n${this.stack.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  get edge(): { id: string; token: string } {
    const edge = this.stack.edge;
    if (!edge) throw new Error('No edge enrolled.');
    return edge;
  }

  /** Authenticated JSON call to the api; throws on a non-2xx reply. */
  async call<T>(method: string, path: string, body?: unknown): Promise<{ data: T; raw: string }> {
    const response = await fetch(this.stack.apiUrl + path, {
      method,
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const raw = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered HTTP ${response.status}: ${raw}`);
    return { data: (JSON.parse(raw) as { data: T }).data, raw };
  }

  async down(): Promise<void> {
    await this.stack?.down();
    if (this.stack && !this.options.clustered) await this.removeState();
    await this.database?.drop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Deletes the run's stream and Redis keys (everything is prefixed with its namespace). */
  private async removeState(): Promise<void> {
    const { natsUrl, redisUrl } = this.stack.options;
    const nc = await connect({ servers: natsUrl.split(',') });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(this.stack.subjects.sessionsStream).catch(() => false);
    } finally {
      await nc.close();
    }
    const redis = new Redis(redisUrl, { lazyConnect: true });
    try {
      await redis.connect();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(
          cursor,
          'MATCH',
          `${this.stack.subjects.namespace}:*`,
          'COUNT',
          1000,
        );
        if (keys.length) await redis.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }
}

/**
 * The fake edge (lib/fake-edge.ts) connected as the tether's enrolled edge, with one saved access
 * of its owner: history keeps the journal (and serves SSE) only for sessions of a real access.
 */
export async function connectFakeEdge(tether: BenchTether): Promise<{ edge: FakeEdge; accessId: string }> {
  const subjects = tether.stack.subjects;
  const edge = await FakeEdge.connect(
    tether.stack.options.natsUrl,
    subjects,
    tether.edge.id,
    BENCH_EDGE_SECRET,
  );
  try {
    const access = await requestService(
      edge.connection,
      subjects,
      'historyAccessCreate',
      {
        actor_id: tether.owner,
        access: {
          name: 'bench',
          kind: 'scripted',
          edge_id: tether.edge.id,
          installation_id: opaqueId(0x1, 1),
          project: '/tmp',
        },
      },
      { timeoutMs: 10_000 },
    );
    return { edge, accessId: access.access.id };
  } catch (error) {
    await edge.close();
    throw error;
  }
}
