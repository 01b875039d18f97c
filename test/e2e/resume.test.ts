// Resume across an edge restart, over HTTP only: the router injects the seed from history, the
// restarted edge finds its binding file and relaunches the native thread, and the conversation
// goes on with the revision continuing from the seed (reference §2.3 resume, §7
// TestNativeBindingSurvivesBridgeRestart).
import { jest } from '@jest/globals';
import {
  signToken,
  type ApiClient,
  TEST_JWT_SECRET,
  type Snapshot,
  eventually,
  sessionBase,
  startSession,
} from '#test-support';
import type { Stack } from '../../scripts/stack/launcher.js';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';

jest.setTimeout(120_000);

let e2e: E2eStack;
let stack: Stack;
let projectDir: string;
const owner = `res${Date.now() % 100000}`;
let alice: ApiClient;

beforeAll(async () => {
  e2e = await startE2eStack({ label: 'e2eresume', owner });
  ({ stack, projectDir } = e2e);
  alice = e2e.owner;
});

afterAll(async () => {
  await e2e?.close();
});

/** Waits across the edge's restart: a probe that fails counts as "not yet". */
function settled<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  return eventually(probe, what, { ignoreErrors: true, detail: () => stack.output() });
}

test('a session resumes on the restarted edge with its history and a continuing revision', async () => {
  const started = await startSession(alice, stack.edge!.id, projectDir, { name: 'resume' });
  const { edgeId, accessId } = started;
  const base = sessionBase(started);
  expect((await alice.agent<Snapshot>({ ...base, action: 'send', text: 'before the restart' })).status).toBe(
    'ok',
  );

  // The finished turn, stored by history: the revision the seed will carry.
  const finished = await settled('the first turn to finish', async () => {
    const polled = await alice.agent<Snapshot>({ ...base, action: 'poll' });
    return polled.running || polled.messages?.length !== 2 ? undefined : polled;
  });
  await settled('history to hold the finished turn', async () => {
    const listed = await alice.agent<{ sessions?: { session_id: string; title?: string }[] }>({
      edge_id: edgeId,
      action: 'sessions',
      access_id: accessId,
    });
    return listed.sessions?.some((session) => session.session_id === base.session_id) ? true : undefined;
  });

  // A new edge process knows nothing of the session but its binding file.
  await stack.kill('edge', 'SIGTERM');
  await stack.start('edge');
  await stack.edgeReady();
  const unknown = await alice.agent<Snapshot>({ ...base, action: 'send', text: 'lost?' });
  expect(unknown.status).not.toBe('ok');

  const resumed = await alice.agent<Snapshot>({ ...base, action: 'resume' });
  expect(resumed.status).toBe('ok');
  expect(resumed.session_id).toBe(base.session_id);
  expect(resumed.revision).toBeGreaterThan(finished.revision!);
  expect(resumed.archived ?? false).toBe(false);
  expect(resumed.messages?.map((message) => message.text)).toEqual(finished.messages?.map((m) => m.text));

  // The conversation goes on in the resumed session.
  expect((await alice.agent<Snapshot>({ ...base, action: 'send', text: 'after the restart' })).status).toBe(
    'ok',
  );
  const after = await settled('the second turn to finish', async () => {
    const polled = await alice.agent<Snapshot>({ ...base, action: 'poll' });
    return !polled.running && polled.messages?.some((message) => message.text === 'after the restart')
      ? polled
      : undefined;
  });
  expect(after.messages?.filter((message) => message.role === 'assistant').length).toBeGreaterThanOrEqual(1);

  // Another actor cannot resume it: the connector is not theirs.
  const mallory = alice.withToken(await signToken(TEST_JWT_SECRET, `mal${Date.now() % 100000}`));
  expect((await mallory.call('POST', '/api/v1/edge-agents', { ...base, action: 'resume' })).status).toBe(404);
});
