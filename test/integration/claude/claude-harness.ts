// Shared setup for the Claude Code suites: the real CLI from node_modules, a scripted fake of the
// Messages API per test, and a private state directory per edge.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fakeAnthropicEnv, type FakeAnthropic } from '../../support/fake-anthropic/index.js';

/** Every wait on Claude Code is bounded by this; turns against the fake take about a second. */
export const WAIT_MS = 30_000;

export const repoRoot = path.resolve(import.meta.dirname, '../../..');

/** The native binary the npm package links as `node_modules/.bin/claude`. */
export function claudeBinary(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@anthropic-ai/claude-code/package.json');
  return path.join(path.dirname(manifest), 'bin', 'claude.exe');
}

/** The edge environment for one test: the fake as the provider, nothing inherited besides PATH. */
export function claudeEdgeEnv(provider: FakeAnthropic, home: string): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C.UTF-8',
    ...fakeAnthropicEnv(provider),
  };
}
