// Plumbing shared by the Redis Cluster and Sentinel harnesses: real `redis-server` processes on
// loopback, in a temporary directory, each killed (SIGKILL) and the directory removed by `stop()`.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitUntil } from './polling.js';

const run = promisify(execFile);
/** Redis processes answer within milliseconds: their waits ask often. */
export const POLL_MS = 100;

export class RedisProcesses {
  readonly dir: string;
  private readonly children = new Map<number, ChildProcess>();

  constructor(label: string) {
    this.dir = mkdtempSync(join(tmpdir(), `tether-${label}-`));
  }

  /** A directory of its own per process (a replica's full sync writes an RDB file there). */
  dirOf(port: number): string {
    const dir = join(this.dir, String(port));
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** Starts `redis-server <args>` and waits until it answers PING on `port`. */
  async start(port: number, args: string[], bootMs = 10_000): Promise<void> {
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    this.children.set(port, child);
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`redis-server on ${port} exited (${code})`))),
    );
    exited.catch(() => undefined);
    await Promise.race([
      waitUntil(async () => (await cli(port, 'PING')) === 'PONG', `PING on ${port}`, {
        timeoutMs: bootMs,
        intervalMs: POLL_MS,
      }),
      exited,
    ]);
  }

  /** kill -9: no shutdown, no last replication, as a crashed host. */
  kill(port: number): void {
    const child = this.children.get(port);
    if (!child) throw new Error(`no redis-server of this harness on ${port}`);
    child.kill('SIGKILL');
    this.children.delete(port);
  }

  async stop(): Promise<void> {
    const children = [...this.children.values()];
    this.children.clear();
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One redis-cli command against a loopback port; '' when the server does not answer. */
export async function cli(port: number, ...args: string[]): Promise<string> {
  try {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
      timeout: 5_000,
    });
    return stdout.trim();
  } catch {
    return '';
  }
}

/** `field:value` lines of INFO or CLUSTER INFO as a map. */
export function infoFields(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0) fields.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  return fields;
}

/** The base arguments of a throw-away server: loopback, no persistence. */
export function ephemeralArgs(port: number, dir: string): string[] {
  return ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
}
