// The two agents B5 measures: how each one is driven directly (the edge's own driver in the
// benchmark's process, against its own scripted provider) and how the stack's demo edge is set up
// to drive the same binary through Tether.
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { AgentEvent, AgentSession } from '../../apps/edge-connector/src/agent/agent-driver.js';
import { createClaudeDriver } from '../../apps/edge-connector/src/agent/claude/index.js';
import { createCodexDriver } from '../../apps/edge-connector/src/agent/codex/index.js';
import type { Stack, StackOptions } from '../../scripts/stack/launcher.js';
import { fakeAnthropicEnv, startFakeAnthropic } from '../../test/support/fake-anthropic/index.js';
import {
  FAKE_API_KEY_ENV,
  prepareCodexHome,
  startFakeProvider,
} from '../../test/support/fake-provider/index.js';

/** A direct session and the provider behind it. */
export interface DirectHandle {
  session: AgentSession;
  /** Queues one plain-text reply. */
  script(text: string): void;
  /** Scripted replies not consumed yet. */
  remaining(): number;
  stop(): Promise<void>;
}

export interface B5Agent {
  kind: 'codex' | 'claude';
  /** For messages and file names. */
  label: string;
  binary: string;
  openDirect(dir: string, onEvent: (event: AgentEvent) => void): Promise<DirectHandle>;
  /** What the stack launcher needs to run its demo edge on this agent against a scripted provider. */
  stackOptions(): Pick<StackOptions, 'agent'> & Partial<StackOptions>;
  scriptTether(stack: Stack, text: string): void;
  remainingTether(stack: Stack): number;
}

/** The platform's native Codex binary when installed (what the e2e suites use), else the npm entry point. */
function codexBinary(): string {
  const native: Record<string, string> = {
    'linux-x64': '@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex',
    'linux-arm64': '@openai/codex-linux-arm64/vendor/aarch64-unknown-linux-musl/bin/codex',
    'darwin-x64': '@openai/codex-darwin-x64/vendor/x86_64-apple-darwin/bin/codex',
    'darwin-arm64': '@openai/codex-darwin-arm64/vendor/aarch64-apple-darwin/bin/codex',
  };
  const relative = native[`${process.platform}-${process.arch}`];
  const candidate = relative && resolve(process.cwd(), 'node_modules', relative);
  if (candidate && existsSync(candidate)) return candidate;
  return createRequire(import.meta.url).resolve('@openai/codex/bin/codex.js');
}

/** The native binary the Claude Code package links as `node_modules/.bin/claude`. */
function claudeBinary(): string {
  const manifest = createRequire(import.meta.url).resolve('@anthropic-ai/claude-code/package.json');
  return join(dirname(manifest), 'bin', 'claude.exe');
}

/** A scripted provider as B5 drives it: plain-text replies only. */
interface TextProvider {
  script(step: { kind: 'text'; text: string }): void;
  readonly remaining: number;
  stop(): Promise<void>;
}

/**
 * The direct session: opened by `driver` on the installation it was pointed at (`binary`), in a
 * project under `dir`, with `provider` behind it (stopped with the session).
 */
async function openDirectHandle(
  driver: ReturnType<typeof createCodexDriver>,
  dir: string,
  onEvent: (event: AgentEvent) => void,
  binary: string,
  provider: TextProvider,
): Promise<DirectHandle> {
  const cwd = join(dir, 'direct-project');
  mkdirSync(cwd, { recursive: true });
  const { installations } = await driver.discover();
  const installation = installations.find((entry) => entry.source === 'explicit');
  if (!installation) throw new Error(`${binary} was not discovered.`);
  const session = await driver.open({ installation, cwd, saved: true, onEvent });
  return {
    session,
    script: (text) => provider.script({ kind: 'text', text }),
    remaining: () => provider.remaining,
    stop: async () => {
      await session.close();
      await provider.stop();
    },
  };
}

export function codexAgent(): B5Agent {
  const binary = codexBinary();
  return {
    kind: 'codex',
    label: 'Codex',
    binary,
    async openDirect(dir, onEvent) {
      const provider = await startFakeProvider();
      const codexHome = join(dir, 'direct-codex-home');
      await prepareCodexHome(codexHome, provider);
      const proxy = `http://127.0.0.1:${provider.port}`;
      // The same configuration the stack launcher gives the edge (stack/launcher.ts codexEnv).
      const driver = createCodexDriver({
        codexPath: binary,
        allowRoot: true,
        codexHome,
        environment: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          LANG: process.env.LANG,
          [FAKE_API_KEY_ENV]: 'fake-provider-key',
          HTTPS_PROXY: proxy,
          HTTP_PROXY: proxy,
          NO_PROXY: '127.0.0.1,localhost',
        },
        envAllowList: [FAKE_API_KEY_ENV],
      });
      return openDirectHandle(driver, dir, onEvent, binary, provider);
    },
    stackOptions: () => ({
      agent: 'codex',
      edgeEnv: { TETHER_EDGE_ALLOW_ROOT: '1', TETHER_CODEX_PATH: binary },
      codexFakeProvider: true,
    }),
    scriptTether: (stack, text) => stack.fakeProvider?.script({ kind: 'text', text }),
    remainingTether: (stack) => stack.fakeProvider?.remaining ?? 0,
  };
}

export function claudeAgent(): B5Agent {
  const binary = claudeBinary();
  return {
    kind: 'claude',
    label: 'Claude Code',
    binary,
    async openDirect(dir, onEvent) {
      const provider = await startFakeAnthropic();
      // The same configuration the stack launcher gives the edge (stack/launcher.ts claudeEnv).
      const driver = createClaudeDriver({
        claudePath: binary,
        allowRoot: true,
        stateDir: join(dir, 'direct-claude-state'),
        environment: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          LANG: process.env.LANG,
          ...fakeAnthropicEnv(provider),
        },
      });
      return openDirectHandle(driver, dir, onEvent, binary, provider);
    },
    stackOptions: () => ({
      agent: 'claude',
      edgeEnv: { TETHER_EDGE_ALLOW_ROOT: '1', TETHER_CLAUDE_PATH: binary },
      claudeFakeProvider: true,
    }),
    scriptTether: (stack, text) => stack.claudeProvider?.script({ kind: 'text', text }),
    remainingTether: (stack) => stack.claudeProvider?.remaining ?? 0,
  };
}
