// The Gemini demo edge end to end over HTTP only: api → session router → edge connector → the
// real Gemini CLI over ACP → the project's fake Gemini API (started by the stack launcher, as
// `TETHER_GEMINI_FAKE_PROVIDER=1 npm run stack -- --agent gemini` does) and back.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { approvedCommandTurn, expectOrderedTiming, expectStopped, useCliStack } from './cli-turn.js';

jest.setTimeout(120_000);

/** Every wait on the chain is bounded by this. */
const WAIT_MS = 40_000;

// The launcher starts the fake Gemini API before the edge and points Gemini CLI at it.
const openSession = useCliStack('e2egemini', `carol${Date.now() % 100000}`, 'gemini', {
  agent: 'gemini',
  geminiFakeProvider: true,
});

test('start → send → approve → reply with the real Gemini CLI', async () => {
  const { stack, client: carol, projectDir, base } = await openSession();

  const target = join(projectDir, 'from-e2e.txt');
  stack.fakeGemini!.script({ kind: 'shell', command: `echo written over http > ${target}` });
  const idle = await approvedCommandTurn(carol, base, 'write the file', WAIT_MS, (approval) => {
    expect(approval.kind).toBe('command');
    expect(approval.command).toContain('echo written over http');
  });
  expect(idle.messages).toEqual([
    { role: 'user', text: 'write the file' },
    { role: 'assistant', text: 'The tool finished.' },
  ]);
  expect(idle.activities?.find((activity) => activity.kind === 'commandExecution')?.status).toBe('completed');
  expect(existsSync(target) && readFileSync(target, 'utf8')).toBe('written over http\n');
  expectOrderedTiming(idle);

  await expectStopped(carol, base);
});
