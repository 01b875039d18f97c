// An unconfirmed send whose edge is killed after it ran (docs/reliability.md, "Seen"): the router
// gave up on the edge's answer, the edge started the turn and recorded the dispatch id, and then
// the edge process was killed. After the restart and a resume, the client's `retry_unknown`
// reaches a new edge process under the same dispatch id; that process must answer the record the
// killed one made (kept in the edge's data folder), not start the turn a second time. The
// router's reconciler is slowed down here so that only the retry can settle the send.
import { randomBytes } from 'node:crypto';
import { jest } from '@jest/globals';
import {
  type ApiClient,
  type Snapshot,
  createAccess,
  eventually,
  findInstallation,
  startOnAccess,
} from '#test-support';
import { operationFingerprint, type EdgeAgentRequest, type HistoryJournalPageReply } from '#contracts';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';

jest.setTimeout(120_000);

/** The router's edge call gives up this fast; the agent takes longer to accept a turn. */
const EDGE_RPC_TIMEOUT_MS = 1_000;
const DISPATCH_DELAY_MS = 2_000;

let e2e: E2eStack;
let alice: ApiClient;
let base: { edge_id: string; access_id: string; session_id: string };
let query: string;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2eunconfirmedrestart',
    owner: `unconfrestart${Date.now() % 100000}`,
    script: { dispatch_delay_ms: DISPATCH_DELAY_MS, rules: [{ steps: [{ type: 'reply', text: 'ok.' }] }] },
    stack: {
      extraEnv: {
        TETHER_EDGE_RPC_TIMEOUT_MS: String(EDGE_RPC_TIMEOUT_MS),
        TETHER_OPERATION_CLAIM_MS: '2000',
        // No sweep within the test: the reconciler would settle the send from the record too.
        TETHER_SUBMISSION_SWEEP_INTERVAL_MS: '600000',
      },
    },
  });
  alice = e2e.owner;
  const edgeId = e2e.stack.edge!.id;
  const installation = await findInstallation(alice, edgeId);
  const access = { edgeId, installation, project: e2e.projectDir, name: 'restart' };
  const accessId = await createAccess(alice, access);
  const { sessionId } = await startOnAccess(alice, { ...access, accessId });
  base = { edge_id: edgeId, access_id: accessId, session_id: sessionId };
  query = `edge_id=${edgeId}&access_id=${accessId}`;
});

afterAll(async () => {
  await e2e?.close();
});

/** The user messages history holds for the session. */
async function userMessages(): Promise<string[]> {
  const reply = await alice.call<HistoryJournalPageReply>(
    'GET',
    `/api/v1/sessions/${base.session_id}/history?${query}&direction=tail&limit=200`,
  );
  const data = reply.body.data!;
  const items = data.ok ? data.page.items : data.snapshot.items;
  return items
    .filter((item) => item.body?.['type'] === 'message' && item.body['role'] === 'user')
    .map((item) => String(item.body?.['text']));
}

function settled<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  return eventually(probe, what, { ignoreErrors: true, detail: () => e2e.stack.output() });
}

test('a send the killed edge ran is not run again by retry_unknown on its restarted process', async () => {
  const body = { ...base, action: 'send', text: 'ran before the kill' } as EdgeAgentRequest;
  const request = {
    ...body,
    client_operation_id: `${Date.now()}-${randomBytes(16).toString('hex')}`,
    payload_fingerprint: operationFingerprint('send', body),
  };
  const first = await alice.agent<Snapshot>(request);
  expect(first.operation?.submission).toMatchObject({ dispatch_state: 'unknown' });

  // The edge goes on: the turn starts, its dispatch is recorded, the reply is journaled.
  await settled('the turn to finish on the edge', async () => {
    const polled = await alice.agent<Snapshot>({ ...base, action: 'poll' });
    return !polled.running && polled.messages?.some((m) => m.text === 'ok.') ? true : undefined;
  });
  await settled('history to hold the message', async () =>
    (await userMessages()).length === 1 ? true : undefined,
  );

  await e2e.stack.kill('edge', 'SIGKILL');
  await e2e.stack.start('edge');
  await e2e.stack.edgeReady();
  await settled('the session to resume on the new edge process', async () =>
    (await alice.agent<Snapshot>({ ...base, action: 'resume' })).status === 'ok' ? true : undefined,
  );

  const retried = await alice.agent<Snapshot>({ ...request, retry_unknown: true });
  expect(retried.status).toBe('ok');
  // Settled by this retry's dispatch, which the new process answered from the killed one's record.
  expect(retried.operation).toMatchObject({
    replayed: false,
    submission: { dispatch_state: 'accepted', item_id: 'm:0:0' },
  });
  // Give a second turn, were there one, the time to reach history; there must be none.
  await settled('the session to be idle', async () => {
    const polled = await alice.agent<Snapshot>({ ...base, action: 'poll' });
    return polled.running ? undefined : polled;
  });
  await new Promise((resolve) => setTimeout(resolve, DISPATCH_DELAY_MS + 1_000));
  expect(await userMessages()).toEqual(['ran before the kill']);
});
