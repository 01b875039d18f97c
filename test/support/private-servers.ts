// Dependencies a suite owns outright, so it may kill, restart or empty them (never the shared
// services other suites use): a redis-server without persistence, a JetStream nats-server with
// its own store folder, and a Postgres cluster made with initdb in a temporary folder. Each one
// can be stopped and started again on the same port; `close()` stops it and removes its files.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { portOpen } from './http.js';
import { waitUntil } from './polling.js';

const run = promisify(execFile);
const BOOT_TIMEOUT_MS = 30_000;
const POLL_MS = 100;

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`. */
export async function waitForPort(port: number, timeoutMs = BOOT_TIMEOUT_MS): Promise<void> {
  await waitUntil(() => portOpen(port), `something listening on port ${port}`, {
    timeoutMs,
    intervalMs: POLL_MS,
  });
}

/** One server process this suite spawns, restartable on the same port. */
export abstract class PrivateServer {
  protected child?: ChildProcess;
  constructor(readonly port: number) {}

  abstract get url(): string;
  protected abstract spawnServer(): ChildProcess;
  /** Files to remove once the server is closed for good. */
  protected cleanup(): void {}

  async start(): Promise<void> {
    if (this.child) throw new Error(`The server on ${this.port} is already running.`);
    const child = this.spawnServer();
    child.once('exit', () => {
      if (this.child === child) this.child = undefined;
    });
    this.child = child;
    await waitForPort(this.port);
  }

  /** Sends `signal` and resolves once the process exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  }

  async close(): Promise<void> {
    await this.stop('SIGTERM');
    this.cleanup();
  }
}

/** redis-server with no persistence: a restart comes back empty. */
export class PrivateRedis extends PrivateServer {
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  protected spawnServer(): ChildProcess {
    return spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
  }
}

/** A certificate and key in PEM files, for a server that speaks TLS only. */
export interface TlsFiles {
  cert: string;
  key: string;
}

/**
 * nats-server with JetStream; its store folder outlives a restart (or a SIGKILL). With `tls`,
 * it accepts TLS connections only.
 */
export class PrivateNats extends PrivateServer {
  private readonly storeDir = mkdtempSync(join(tmpdir(), 'tether-private-nats-'));

  constructor(
    port: number,
    private readonly tls?: TlsFiles,
  ) {
    super(port);
  }

  get url(): string {
    return `${this.tls ? 'tls' : 'nats'}://127.0.0.1:${this.port}`;
  }

  protected spawnServer(): ChildProcess {
    const tls = this.tls ? ['--tls', '--tlscert', this.tls.cert, '--tlskey', this.tls.key] : [];
    return spawn(
      'nats-server',
      ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir, ...tls],
      { stdio: 'ignore' },
    );
  }

  protected override cleanup(): void {
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}

/** The newest PostgreSQL server binaries Debian installed (/usr/lib/postgresql/<major>/bin). */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const majors = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  if (!majors[0]) throw new Error(`No PostgreSQL server under ${root}.`);
  return join(root, majors[0], 'bin');
}

/**
 * A Postgres cluster of its own (initdb, trust auth on 127.0.0.1, user `postgres`). initdb and
 * postgres refuse to run as root: as root (CI), both run as the system's `postgres` user.
 */
export class PrivatePostgres extends PrivateServer {
  private readonly dir = mkdtempSync(join(tmpdir(), 'tether-private-pg-'));
  private readonly dataDir = join(this.dir, 'data');
  private readonly bin = postgresBin();
  private owner: { uid: number; gid: number } | undefined;

  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Creates the cluster, then starts it. */
  async init(): Promise<void> {
    if (process.getuid?.() === 0) {
      const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
      const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
      this.owner = { uid, gid };
      chownSync(this.dir, uid, gid);
    }
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        join(this.bin, 'initdb'),
        ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'],
        { stdio: 'ignore', ...this.owner },
      );
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`initdb exited ${code}`))));
    });
    await this.start();
  }

  protected spawnServer(): ChildProcess {
    // fsync off: a test cluster, and the machine is shared; the socket folder is the cluster's own.
    return spawn(
      join(this.bin, 'postgres'),
      ['-D', this.dataDir, '-p', String(this.port), '-h', '127.0.0.1', '-k', this.dir, '-c', 'fsync=off'],
      { stdio: 'ignore', ...this.owner },
    );
  }

  /** The port opens before the cluster accepts queries ("the database system is starting up"). */
  override async start(): Promise<void> {
    await super.start();
    const deadline = Date.now() + BOOT_TIMEOUT_MS;
    for (;;) {
      const client = new pg.Client({ connectionString: this.url });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  }

  /** SIGINT is Postgres's fast shutdown: open connections are terminated, the cluster stops cleanly. */
  override async stop(signal: NodeJS.Signals = 'SIGINT'): Promise<void> {
    await super.stop(signal);
  }

  override async close(): Promise<void> {
    await this.stop('SIGINT');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
