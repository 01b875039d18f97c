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
import { Stack } from '../../scripts/stack/launcher.js';
import { benchServices } from './env.js';

export const BENCH_JWT_SECRET = 'bench-jwt-secret-0123456789';
export const BENCH_EDGE_SECRET = 'bench-edge-secret-0123456789';

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
}

export class BenchTether {
  readonly owner = `bench${Date.now() % 100000}`;
  stack!: Stack;
  token!: string;
  private database?: TestDatabase;
  private dir = mkdtempSync(join(tmpdir(), 'tether-bench-'));
  /** performance.now() when the first service was spawned (profiles start there). */
  spawnedAt = 0;

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
    this.stack = new Stack({
      natsUrl: services.natsUrl,
      redisUrl: services.redisUrl,
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
    if (this.stack) await this.removeState();
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
