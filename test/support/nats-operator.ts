// A nats-server in operator mode for one suite, started from the shipped configuration
// (deploy/nats/nats-server.conf) with the authorization block `npm run nats:setup` would write,
// on its own loopback port and folders; `stop()` ends it and removes them.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Subjects } from '#contracts';
import { createDeployment, type NatsDeployment } from '#nats-auth';
import { portOpen } from './http.js';
import { waitUntil } from './polling.js';

/** The server starts in well under a second; a loaded CI box gets far more. */
const START_TIMEOUT_MS = 30_000;

export interface OperatorNats {
  url: string;
  deployment: NatsDeployment;
  /** Folder holding the configuration and every creds file (`creds/<identity>.creds`). */
  dir: string;
  /** Writes `text` as a creds file in the suite's folder and returns its path. */
  writeCreds(name: string, text: string): string;
  credsPath(identity: keyof NatsDeployment['creds'] | 'system'): string;
  stop(): Promise<void>;
}

async function waitForPort(port: number, server: ChildProcess, output: () => string): Promise<void> {
  const listening = async () => {
    if (server.exitCode !== null) throw new Error(`nats-server exited:\n${output()}`);
    return portOpen(port);
  };
  await waitUntil(listening, `nats-server listening on ${port}`, {
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 100,
    detail: output,
  });
}

/**
 * Starts nats-server (it must be on PATH; .ci/run installs it) with the shipped configuration
 * on `port`, JetStream and the resolver in a temporary folder.
 */
export async function startOperatorNats(subjects: Subjects, port: number): Promise<OperatorNats> {
  const dir = mkdtempSync(join(tmpdir(), 'tether-nats-operator-'));
  const deployment = await createDeployment({ subjects, resolverDir: join(dir, 'jwt') });
  mkdirSync(join(dir, 'secrets'), { mode: 0o700 });
  mkdirSync(join(dir, 'creds'), { mode: 0o700 });
  // The shipped file as it is, but for the JetStream folder (a volume in containers).
  const shipped = readFileSync(resolve('deploy/nats/nats-server.conf'), 'utf8');
  writeFileSync(
    join(dir, 'nats-server.conf'),
    shipped.replace('"/data/jetstream"', JSON.stringify(join(dir, 'js'))),
  );
  writeFileSync(join(dir, 'secrets', 'auth.conf'), deployment.serverAuthConfig);
  const writeCreds = (name: string, text: string) => {
    const path = join(dir, 'creds', `${name}.creds`);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
  for (const [identity, text] of Object.entries(deployment.creds)) writeCreds(identity, text);
  writeCreds('system', deployment.systemCreds);
  let log = '';
  const server = spawn(
    'nats-server',
    ['-c', join(dir, 'nats-server.conf'), '-a', '127.0.0.1', '-p', String(port), '-m', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const collect = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
  };
  server.stdout.on('data', collect);
  server.stderr.on('data', collect);
  const stop = async () => {
    if (server.exitCode === null) {
      const exited = once(server, 'exit');
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(port, server, () => log);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    deployment,
    dir,
    writeCreds,
    credsPath: (identity) => join(dir, 'creds', `${identity}.creds`),
    stop,
  };
}
