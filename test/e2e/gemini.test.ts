// The Gemini demo edge end to end over HTTP only: api → session router → edge connector → the
// real Gemini CLI over ACP → the project's fake Gemini API (started by the stack launcher, as
// `TETHER_GEMINI_FAKE_PROVIDER=1 npm run stack -- --agent gemini` does) and back.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { printOutputOnFailure } from '../support/e2e-stack.js';
import {
  approvedCommandTurn,
  expectOrderedTiming,
  expectStopped,
  startCliSession,
  startCliStack,
  type CliStack,
} from './cli-turn.js';

jest.setTimeout(120_000);

/** Every wait on the chain is bounded by this. */
const WAIT_MS = 40_000;

let cli: CliStack | undefined;
const owner = `carol${Date.now() % 100000}`;

beforeAll(async () => {
  // The launcher starts the fake Gemini API before the edge and points Gemini CLI at it.
  cli = await startCliStack('e2egemini', owner, { agent: 'gemini', geminiFakeProvider: true });
});

afterAll(async () => {
  // close() stops the edge, whose shutdown kills every agent's process group and the spare.
  await cli?.e2e.close();
});

printOutputOnFailure(() => cli?.e2e.stack);

test('start → send → approve → reply with the real Gemini CLI', async () => {
  const { e2e, projectDir } = cli!;
  const carol = e2e.owner;
  const base = await startCliSession(carol, cli!, 'gemini');

  const target = join(projectDir, 'from-e2e.txt');
  e2e.stack.fakeGemini!.script({ kind: 'shell', command: `echo written over http > ${target}` });
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
