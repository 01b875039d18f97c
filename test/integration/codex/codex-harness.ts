// Shared setup for the Codex driver suites: a fake provider, a temp CODEX_HOME and project per
// test, the real codex binary from node_modules, and an event collector with bounded waits.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type {
  AgentEvent,
  AgentSession,
  OpenSessionOptions,
} from '../../../apps/edge-connector/src/agent/agent-driver.js';
import {
  createCodexDriver,
  type CodexDriverConfig,
} from '../../../apps/edge-connector/src/agent/codex/index.js';
import {
  FAKE_API_KEY_ENV,
  prepareCodexHome,
  startFakeProvider,
  type FakeProvider,
} from '../../support/fake-provider/index.js';

/** Every wait on Codex is bounded by this; turns against the fake take well under a second. */
export const WAIT_MS = 20_000;

const repoRoot = path.resolve(import.meta.dirname, '../../..');

/** The native binary when the platform package is installed (fast start), else the npm entry point. */
export function codexBinary(): string {
  const platformPackage: Record<string, string> = {
    'linux-x64': '@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex',
    'linux-arm64': '@openai/codex-linux-arm64/vendor/aarch64-unknown-linux-musl/bin/codex',
    'darwin-x64': '@openai/codex-darwin-x64/vendor/x86_64-apple-darwin/bin/codex',
    'darwin-arm64': '@openai/codex-darwin-arm64/vendor/aarch64-apple-darwin/bin/codex',
  };
  const native = platformPackage[`${process.platform}-${process.arch}`];
  if (native) {
    const candidate = path.join(repoRoot, 'node_modules', native);
    if (existsSync(candidate)) return candidate;
  }
  const require = createRequire(import.meta.url);
  return require.resolve('@openai/codex/bin/codex.js');
}

export class EventLog {
  readonly events: AgentEvent[] = [];
  private readonly waiters = new Set<() => void>();

  readonly push = (event: AgentEvent): void => {
    this.events.push(event);
    for (const wake of this.waiters) wake();
  };

  of<T extends AgentEvent['type']>(type: T): Extract<AgentEvent, { type: T }>[] {
    return this.events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);
  }

  waitFor<T extends AgentEvent['type']>(
    type: T,
    predicate: (event: Extract<AgentEvent, { type: T }>) => boolean = () => true,
    timeoutMs = WAIT_MS,
  ): Promise<Extract<AgentEvent, { type: T }>> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = this.of(type).find(predicate);
        if (!found) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(
            `no ${type} event within ${timeoutMs} ms; saw ${this.events.map((e) => e.type).join(',')}`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }
}

export interface Harness {
  provider: FakeProvider;
  codexHome: string;
  project: string;
  config: CodexDriverConfig;
  open(
    log: EventLog,
    extra?: Partial<OpenSessionOptions>,
    config?: Partial<CodexDriverConfig>,
  ): Promise<AgentSession>;
  cleanup(): Promise<void>;
}

export async function createHarness(): Promise<Harness> {
  const provider = await startFakeProvider();
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-codex-')));
  const codexHome = path.join(base, 'codex-home');
  const project = path.join(base, 'project');
  const home = path.join(base, 'home');
  await Promise.all([mkdir(project), mkdir(home)]);
  await prepareCodexHome(codexHome, provider);
  const proxy = `http://127.0.0.1:${provider.port}`;
  const config: CodexDriverConfig = {
    codexPath: codexBinary(),
    allowRoot: true,
    codexHome,
    environment: {
      PATH: process.env.PATH,
      HOME: home,
      LANG: 'C.UTF-8',
      [FAKE_API_KEY_ENV]: 'fake-key',
      // Anything Codex tries to reach besides the provider lands on the fake, which refuses it.
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      NO_PROXY: '127.0.0.1,localhost',
      OPENAI_API_KEY: undefined,
    },
    envAllowList: [FAKE_API_KEY_ENV],
    localDirs: [repoRoot],
  };
  const sessions: AgentSession[] = [];

  return {
    provider,
    codexHome,
    project,
    config,
    async open(log, extra = {}, overrides = {}) {
      const driver = createCodexDriver({ ...config, ...overrides });
      const { installations } = await driver.discover();
      const installation = installations.find((entry) => entry.source === 'explicit');
      if (!installation) throw new Error('the codex binary was not discovered');
      const session = await driver.open({
        installation,
        cwd: project,
        saved: true,
        onEvent: log.push,
        ...extra,
      });
      sessions.push(session);
      return session;
    },
    async cleanup() {
      await Promise.all(sessions.map((session) => session.close()));
      await provider.stop();
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** Runs one turn to completion and returns its id and status. */
export async function runTurn(
  session: AgentSession,
  log: EventLog,
  text: string,
  permissionMode: 'read-only' | 'workspace-write' = 'read-only',
): Promise<{ turnId: string; status: string }> {
  const { turnId } = await session.startTurn({ text, permissionMode });
  const done = await log.waitFor('turn_completed', (event) => event.turnId === turnId);
  return { turnId, status: done.status };
}
