// An unconfirmed send on the real chain (issue 4, reference orca §4 and §9.4): the scripted agent
// takes longer to accept a turn than the router waits for the edge, so the router's send call
// times out and the submission settles `unknown` while the edge goes on, starts the turn and
// records its dispatch id. Then either the client resends with `retry_unknown` (the edge answers its record:
// no second turn) or nobody asks and the router's reconciler settles it from that record. Either
// way the journal holds the one user message and an `accepted` submission with a receipt.
import { randomBytes } from 'node:crypto';
import { jest } from '@jest/globals';
import {
  type ApiClient,
  type Snapshot,
  sleep,
  createAccess,
  findInstallation,
  startOnAccess,
} from '#test-support';
import {
  operationFingerprint,
  type EdgeAgentRequest,
  type HistoryJournalPageReply,
  type JournalSubmissionView,
  type Installation,
} from '#contracts';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';

jest.setTimeout(120_000);

/** The router's edge call gives up this fast; the agent takes longer to accept a turn. */
const EDGE_RPC_TIMEOUT_MS = 1_000;
const DISPATCH_DELAY_MS = 2_500;
/** Both are short so the sweep and the reconciler act within the test. */
const SWEEP_INTERVAL_MS = 2_000;
const RECONCILE_BACKOFF_MS = 500;
const CONVERGE_TIMEOUT_MS = 30_000;

let e2e: E2eStack;
let alice: ApiClient;
let edgeId: string;
let accessId: string;
let installation: Installation;
let query: string;
const owner = `unconfirmed${Date.now() % 100000}`;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2eunconfirmed',
    owner,
    script: {
      dispatch_delay_ms: DISPATCH_DELAY_MS,
      rules: [{ steps: [{ type: 'reply', text: 'ok.' }] }],
    },
    stack: {
      extraEnv: {
        TETHER_EDGE_RPC_TIMEOUT_MS: String(EDGE_RPC_TIMEOUT_MS),
        TETHER_OPERATION_CLAIM_MS: '2000',
        TETHER_SUBMISSION_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
        TETHER_SUBMISSION_RECONCILE_BACKOFF_MS: String(RECONCILE_BACKOFF_MS),
      },
    },
  });
  alice = e2e.owner;
  edgeId = e2e.stack.edge!.id;
  installation = await findInstallation(alice, edgeId);
  accessId = await createAccess(alice, access());
  query = `edge_id=${edgeId}&access_id=${accessId}`;
});

afterAll(async () => {
  await e2e?.close();
});

const access = () => ({ edgeId, installation, project: e2e.projectDir, name: 'unconfirmed' });

async function startSession(): Promise<string> {
  return (await startOnAccess(alice, { ...access(), accessId })).sessionId;
}

function sendRequest(sessionId: string, text: string): EdgeAgentRequest {
  const body: EdgeAgentRequest = {
    edge_id: edgeId,
    access_id: accessId,
    session_id: sessionId,
    action: 'send',
    text,
  };
  return {
    ...body,
    client_operation_id: `${Date.now()}-${randomBytes(16).toString('hex')}`,
    payload_fingerprint: operationFingerprint('send', body),
  };
}

/** A send the router gives up on before the edge answers it (the edge still runs it). */
async function sendUnconfirmed(request: EdgeAgentRequest): Promise<Snapshot> {
  return alice.agent<Snapshot>(request as unknown as Record<string, unknown>);
}

/** The session's journal as history pages it: user messages and the submission of `id`. */
async function journal(sessionId: string, id: string) {
  const reply = await alice.call<HistoryJournalPageReply>(
    'GET',
    `/api/v1/sessions/${sessionId}/history?${query}&direction=tail&limit=200`,
  );
  const data = reply.body.data!;
  const items = data.ok ? data.page.items : data.snapshot.items;
  const submissions: JournalSubmissionView[] = data.ok ? data.page.submissions : data.snapshot.submissions;
  return {
    users: items.filter((item) => item.body?.['type'] === 'message' && item.body['role'] === 'user').length,
    submission: submissions.find((submission) => submission.clientMessageId === id),
  };
}

async function converge(sessionId: string, id: string, state: string) {
  const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
  let seen = await journal(sessionId, id);
  while (seen.submission?.dispatchState !== state && Date.now() < deadline) {
    await sleep(200);
    seen = await journal(sessionId, id);
  }
  return seen;
}

test('a send whose answer was lost is dispatched again on retry_unknown without a second message', async () => {
  const sessionId = await startSession();
  const request = sendRequest(sessionId, 'lost answer');
  const first = await sendUnconfirmed(request);
  expect(first.status).toBe('ok');
  expect(first.operation?.submission).toMatchObject({
    dispatch_state: 'unknown',
    reason: 'dispatch_unconfirmed',
  });

  // A plain retry is not proof either way: it replays the unknown submission.
  const plain = await alice.agent<Snapshot>(request as unknown as Record<string, unknown>);
  expect(plain.operation).toMatchObject({ replayed: true });

  // While the first copy's turn runs, a retry_unknown is refused before it reaches the edge
  // (busy) and the send stays unknown; once the turn is over it reaches the edge under the same
  // dispatch id and the edge answers its record (unless the reconciler was faster, in which case
  // the retry replays the acceptance).
  let retried: Snapshot | undefined;
  const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    retried = await alice.agent<Snapshot>({ ...request, retry_unknown: true } as unknown as Record<
      string,
      unknown
    >);
    // Never `rejected`: the first copy was delivered, whatever a refused retry says.
    expect(retried.operation?.submission?.dispatch_state).not.toBe('rejected');
    if (retried.operation?.submission?.dispatch_state === 'accepted') break;
    await sleep(200);
  }
  expect(retried?.status).toBe('ok');
  // Settled by this retry's own dispatch (the edge's record answered it), or replayed from the
  // reconciler's settlement: never a new turn either way (below).
  const byRetry = retried?.operation?.replayed === false;
  expect(byRetry || retried?.operation?.submission?.reason === 'reconciled_from_edge_record').toBe(true);
  console.log(`unconfirmed send settled by ${byRetry ? 'retry_unknown' : 'the reconciler'}`);
  expect(retried?.operation?.submission).toMatchObject({ dispatch_state: 'accepted', item_id: 'm:0:0' });

  const seen = await converge(sessionId, request.client_operation_id!, 'accepted');
  expect(seen.submission).toMatchObject({ dispatchState: 'accepted', itemId: 'm:0:0' });
  expect(seen.users).toBe(1);
});

test('an unknown send nobody retries is settled by the reconciler from the edge record', async () => {
  const sessionId = await startSession();
  const request = sendRequest(sessionId, 'nobody asks');
  const first = await sendUnconfirmed(request);
  // The whole reply, so a failure shows what came back instead.
  expect(first).toMatchObject({ status: 'ok', operation: { submission: { dispatch_state: 'unknown' } } });

  const seen = await converge(sessionId, request.client_operation_id!, 'accepted');
  expect(seen.submission).toMatchObject({
    dispatchState: 'accepted',
    reason: 'reconciled_from_edge_record',
    itemId: 'm:0:0',
  });
  expect(seen.users).toBe(1);
  // A retry now replays the settled answer; nothing is dispatched again.
  const replay = await alice.agent<Snapshot>({ ...request, retry_unknown: true } as unknown as Record<
    string,
    unknown
  >);
  expect(replay.operation).toMatchObject({ replayed: true, submission: { dispatch_state: 'accepted' } });
  expect((await journal(sessionId, request.client_operation_id!)).users).toBe(1);
});
