// The Claude Code demo edge end to end over HTTP only: api → session router → edge connector → the
// real `claude` CLI → the project's scripted Messages API (started by the stack launcher, as
// `TETHER_CLAUDE_FAKE_PROVIDER=1 npm run stack -- --agent claude` does) and back.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import type { ApiClient, Snapshot } from '#test-support';
import type { Stack } from '../../scripts/stack/launcher.js';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';

jest.setTimeout(120_000);

/** Every wait on the chain is bounded by this. */
const WAIT_MS = 45_000;

let e2e: E2eStack | undefined;
let stack: Stack;
let projectDir: string;
const owner = `dave${Date.now() % 100000}`;
let dave: ApiClient;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2eclaude',
    owner,
    stack: {
      agent: 'claude',
      // The launcher starts the scripted Messages API before the edge and points Claude Code at it;
      // the edge finds the CLI in the repository's node_modules/.bin by itself.
      claudeFakeProvider: true,
      // The suite may run beside another stack on this machine: no fixed ops (metrics) ports.
      extraEnv: { TETHER_METRICS_PORT: 'off' },
    },
  });
  stack = e2e.stack;
  projectDir = realpathSync(e2e.projectDir);
  dave = e2e.owner;
});

afterAll(async () => {
  // close() stops the edge, whose shutdown kills every CLI's process group.
  await e2e?.close();
});

let failed = false;
afterEach(() => {
  const state = expect.getState();
  if (state.currentTestName && state.assertionCalls !== state.numPassingAsserts) failed = true;
});
afterAll(() => {
  if (failed) console.log(stack?.output().split('\n').slice(-150).join('\n'));
});

/** Watches over HTTP until `done` holds, the way a browser would. */
async function watchUntil(
  base: Record<string, unknown>,
  from: number,
  done: (snapshot: Snapshot) => boolean,
  what: string,
): Promise<Snapshot> {
  const deadline = Date.now() + WAIT_MS;
  let cursor = from;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${WAIT_MS} ms`);
    const snapshot = await dave.agent<Snapshot>({ ...base, action: 'watch', cursor: String(cursor) });
    if (snapshot.status === 'ok' && done(snapshot)) return snapshot;
    cursor = snapshot.revision ?? cursor;
  }
}

test('start → send → approve → reply with the real Claude Code CLI', async () => {
  const edgeId = stack.edge!.id;
  const discovered = await dave.agent<Snapshot>({ edge_id: edgeId, action: 'discover' });
  expect(discovered.status).toBe('ok');
  const installation = discovered.installations?.find((candidate) => candidate.kind === 'claude');
  expect(installation).toBeDefined();
  const created = await dave.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: 'e2e claude',
    kind: 'claude',
    edge_id: edgeId,
    installation_id: installation!.id,
    project: projectDir,
  });
  expect(created.status).toBe(200);
  const accessId = created.body.data!.id;
  const started = await dave.agent<Snapshot>({
    edge_id: edgeId,
    action: 'start',
    access_id: accessId,
    installation_id: installation!.id,
    project: projectDir,
  });
  expect(started.status).toBe('ok');
  const base = { edge_id: edgeId, access_id: accessId, session_id: started.session_id };

  // The prompt words of the demo: `escalate: CMD` makes the fake ask Claude Code to run CMD.
  const target = join(projectDir, 'from-e2e.txt');
  const sent = await dave.agent<Snapshot>({ ...base, action: 'send', text: `escalate: touch ${target}` });
  expect(sent).toMatchObject({ status: 'ok', running: true });

  const asking = await watchUntil(
    base,
    sent.revision ?? 0,
    (snapshot) => (snapshot.approvals ?? []).length > 0,
    'the approval',
  );
  const approval = asking.approvals![0]!;
  expect(approval).toMatchObject({ kind: 'command', command: `touch ${target}` });
  const approved = await dave.agent<Snapshot>({
    ...base,
    action: 'approve',
    approval_id: approval.id,
    decision: 'accept',
  });
  expect(approved.status).toBe('ok');

  const idle = await watchUntil(base, approved.revision ?? 0, (snapshot) => !snapshot.running, 'the reply');
  expect(idle.messages).toEqual([
    { role: 'user', text: `escalate: touch ${target}` },
    { role: 'assistant', text: 'The tool finished.' },
  ]);
  expect(idle.activities?.find((activity) => activity.kind === 'commandExecution')).toMatchObject({
    status: 'completed',
    exit_code: 0,
  });
  expect(existsSync(target) && readFileSync(target, 'utf8')).toBe('');
  const timing = idle.turn_timing!;
  expect(timing.dispatch_ms!).toBeLessThanOrEqual(timing.first_reply_ms!);
  expect(timing.first_reply_ms!).toBeLessThanOrEqual(timing.finished_ms!);
  expect(stack.claudeProvider!.otherRequests).toBe(0);

  const stopped = await dave.agent<Snapshot>({ ...base, action: 'stop' });
  expect(stopped).toMatchObject({ status: 'session_closed', closed: true });
});
