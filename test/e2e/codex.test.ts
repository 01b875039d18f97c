// The Codex demo edge end to end over HTTP only: api → session router → edge connector → the real
// `codex app-server` → the project's scripted provider (started by the stack launcher, as
// `TETHER_CODEX_FAKE_PROVIDER=1 npm run stack -- --agent codex` does) and back.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { jest } from '@jest/globals';
import { approvedCommandTurn, expectOrderedTiming, expectStopped, useCliStack } from './cli-turn.js';

jest.setTimeout(90_000);

/** Every wait on the chain is bounded by this. */
const WAIT_MS = 30_000;

/**
 * The platform's native Codex binary when installed: it starts in milliseconds where the npm
 * entry point adds a node start. Without it the edge discovers `node_modules/.bin/codex` itself.
 */
function nativeCodex(): Record<string, string> {
  const triple: Record<string, string> = {
    'linux-x64': 'codex-linux-x64/vendor/x86_64-unknown-linux-musl',
    'linux-arm64': 'codex-linux-arm64/vendor/aarch64-unknown-linux-musl',
  };
  const folder = triple[`${process.platform}-${process.arch}`];
  const binary = folder && resolve(import.meta.dirname, '../../node_modules/@openai', folder, 'bin/codex');
  return binary && existsSync(binary) ? { TETHER_CODEX_PATH: binary } : {};
}

// The launcher starts the scripted Responses-API provider before the edge and points the edge's
// Codex at it. Codex reports resolved paths: the suite compares with the resolved folder.
const openSession = useCliStack('e2ecodex', `carol${Date.now() % 100000}`, 'codex', {
  agent: 'codex',
  codexFakeProvider: true,
  edgeEnv: nativeCodex(),
});

test('start → send → approve → reply with the real Codex CLI', async () => {
  const { stack, client: carol, projectDir, base } = await openSession();

  const target = join(projectDir, 'from-e2e.txt');
  stack.fakeProvider!.script(
    { kind: 'shell', command: `echo written over http > ${target}`, escalate: true },
    { kind: 'text', text: 'The file is written.' },
  );
  const idle = await approvedCommandTurn(carol, base, 'write the file', WAIT_MS, (approval) => {
    expect(approval.kind).toBe('command');
    expect(approval.command).toContain('echo written over http');
  });
  expect(idle.messages).toEqual([
    { role: 'user', text: 'write the file' },
    { role: 'assistant', text: 'The file is written.' },
  ]);
  expect(idle.activities?.find((activity) => activity.kind === 'commandExecution')).toMatchObject({
    status: 'completed',
    exit_code: 0,
  });
  expect(existsSync(target) && readFileSync(target, 'utf8')).toBe('written over http\n');
  expectOrderedTiming(idle);

  await expectStopped(carol, base);
});
