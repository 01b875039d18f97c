// The Claude Code demo edge end to end over HTTP only: api → session router → edge connector → the
// real `claude` CLI → the project's scripted Messages API (started by the stack launcher, as
// `TETHER_CLAUDE_FAKE_PROVIDER=1 npm run stack -- --agent claude` does) and back.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { approvedCommandTurn, expectOrderedTiming, expectStopped, useCliStack } from './cli-turn.js';

jest.setTimeout(120_000);

/** Every wait on the chain is bounded by this. */
const WAIT_MS = 45_000;

// The launcher starts the scripted Messages API before the edge and points Claude Code at it;
// the edge finds the CLI in the repository's node_modules/.bin by itself.
const openSession = useCliStack('e2eclaude', `dave${Date.now() % 100000}`, 'claude', {
  agent: 'claude',
  claudeFakeProvider: true,
});

test('start → send → approve → reply with the real Claude Code CLI', async () => {
  const { stack, client: dave, projectDir, base } = await openSession();

  // The prompt words of the demo: `escalate: CMD` makes the fake ask Claude Code to run CMD.
  const target = join(projectDir, 'from-e2e.txt');
  const idle = await approvedCommandTurn(dave, base, `escalate: touch ${target}`, WAIT_MS, (approval) => {
    expect(approval).toMatchObject({ kind: 'command', command: `touch ${target}` });
  });
  expect(idle.messages).toEqual([
    { role: 'user', text: `escalate: touch ${target}` },
    { role: 'assistant', text: 'The tool finished.' },
  ]);
  expect(idle.activities?.find((activity) => activity.kind === 'commandExecution')).toMatchObject({
    status: 'completed',
    exit_code: 0,
  });
  expect(existsSync(target) && readFileSync(target, 'utf8')).toBe('');
  expectOrderedTiming(idle);
  expect(stack.claudeProvider!.otherRequests).toBe(0);

  await expectStopped(dave, base);
});
