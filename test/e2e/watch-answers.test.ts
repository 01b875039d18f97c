// A watch the router answers with the state it journaled (the snapshot the edge sent with its
// update) must be exactly what the edge answers a poll at that revision. Over a scripted session
// with the real edge connector, a turn with an approval and a command is watched to its end, each
// watch reply compared with a poll made right after it whenever the session still rests at the
// watched revision; then, at rest, a watch is made to wait for a change that is one update (a
// permission mode), so that the router answers it from the journal, and its bytes are compared
// with the edge's poll of the whole finished session.
import { eventually, sessionBase, startSession, type ApiClient, type Snapshot } from '#test-support';
import { metricValue } from '../integration/telemetry/metrics-endpoints.js';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';
import { jest } from '@jest/globals';

jest.setTimeout(120_000);

let e2e: E2eStack;
let alice: ApiClient;

beforeAll(async () => {
  e2e = await startE2eStack({ label: 'e2ewatchanswers', owner: `alice${Date.now() % 100_000}` });
  alice = e2e.owner;
});

afterAll(async () => {
  await e2e?.close();
});

/** Watches the router waited on and answered with the state it journaled. */
const journalAnswers = () =>
  metricValue(e2e.stack, 'router', 'tether_watch_answers_total', { source: 'journal' });

it('answers a watch with exactly the bytes a poll of the edge answers at that revision', async () => {
  const session = await startSession(alice, e2e.stack.edge!.id, e2e.projectDir);
  const base = sessionBase(session);
  let cursor = session.revision;
  const compared: { revision: number; approvals: number; running: boolean }[] = [];

  /** Watches from the cursor until `done`, comparing each reply with a poll at the same revision. */
  const follow = async (done: (snapshot: Snapshot) => boolean): Promise<Snapshot> => {
    for (;;) {
      const watched = await alice.agent<Snapshot>({ ...base, action: 'watch', cursor: String(cursor) });
      expect(watched.status).toBe('ok');
      const polled = await alice.agent<Snapshot>({ ...base, action: 'poll' });
      if (polled.revision === watched.revision) {
        expect(JSON.stringify(watched)).toBe(JSON.stringify(polled));
        compared.push({
          revision: watched.revision ?? 0,
          approvals: watched.approvals?.length ?? 0,
          running: watched.running === true,
        });
      }
      cursor = watched.revision ?? cursor;
      if (done(watched)) return watched;
    }
  };

  const watching = follow((snapshot) => (snapshot.approvals?.length ?? 0) > 0);
  expect((await alice.agent<Snapshot>({ ...base, action: 'send', text: 'approve me' })).status).toBe('ok');
  const asking = await watching;
  // The turn rests at the approval until it is answered: that state was compared.
  expect(compared.at(-1)).toMatchObject({ revision: asking.revision, approvals: 1, running: true });

  const approved = await alice.agent<Snapshot>({
    ...base,
    action: 'approve',
    approval_id: asking.approvals![0]!.id,
    decision: 'accept',
  });
  expect(approved.status).toBe('ok');
  const idle = await follow((snapshot) => !snapshot.running);
  expect(compared.at(-1)).toMatchObject({ revision: idle.revision, approvals: 0, running: false });
  // The prompt, the reply before the command and the reply after it.
  expect(idle.messages?.map((message) => message.role)).toEqual(['user', 'assistant', 'assistant']);

  // At rest, a watch waits (the router counts it) and one change moves the session by one update:
  // the reply is the journaled state, and the edge answers a poll with the same bytes.
  let mode = idle.permission_mode;
  for (let change = 0; change < 2; change += 1) {
    mode = mode === 'read-only' ? 'workspace-write' : 'read-only';
    const journaledBefore = await journalAnswers();
    const watching = alice.agent<Snapshot>({ ...base, action: 'watch', cursor: String(cursor) });
    await eventually(
      async () =>
        (await metricValue(e2e.stack, 'router', 'tether_watchers_active')) >= 1 ? true : undefined,
      'the watch waiting in the router',
    );
    const changed = await alice.agent<Snapshot>({ ...base, action: 'permissions', permission_mode: mode });
    expect(changed.status).toBe('ok');
    const watched = await watching;
    expect(watched).toMatchObject({ status: 'ok', revision: cursor + 1, permission_mode: mode });
    expect(await journalAnswers()).toBe(journaledBefore + 1);
    expect(JSON.stringify(watched)).toBe(
      JSON.stringify(await alice.agent<Snapshot>({ ...base, action: 'poll' })),
    );
    cursor = watched.revision!;
  }
});
