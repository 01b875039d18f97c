// The crash boundary of sends (reference orca §7 `journal-crash-boundary.test.ts`, §9.4) on the
// real chain: a router on Redis and JetStream, history on Postgres, and a raw NATS responder as
// the edge that keeps dispatch records the way a real edge does. A replica that died between a
// send's write-ahead row and its settlement leaves a `pending` submission; the router's sweep
// turns it `unknown` (never re-sent), and the reconciler settles an `unknown` one only on the
// edge's own record of the dispatch id. Rounds are run on demand for determinism.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  operationFingerprint,
  result,
  type EdgeAgentRequest,
  type EdgeAgentRPCRequest,
  type EdgeAgentResult,
  type EdgeDispatchRecord,
  type OpenSubmission,
  type Submission,
} from '#contracts';
import { decodeJson, encodeJson, requestService } from '#messaging';
import { REDIS } from '../../../apps/session-router/src/common/tokens.js';
import {
  RECONCILED_REASON,
  RESTART_REASON,
  SubmissionReconciler,
} from '../../../apps/session-router/src/operations/submission-reconciler.service.js';
import type { RunningRouter } from '../../../apps/session-router/src/app.js';
import { JournalSequencerService } from '../../../apps/session-router/src/journal-sequencer/journal-sequencer.service.js';
import {
  HARNESS_TIMEOUT_MS,
  sessionId,
  useJournalStack,
  type HistoryHarness,
} from '../../support/journal.js';

const OWNER = 'crash-owner';
/** Long enough that a test's own rows are never swept by the timer before the test asks. */
const TIMER_INTERVAL_MS = 600_000;

const chain = useJournalStack('crash', OWNER, () => ({
  routerEnv: {
    TETHER_EDGE_RPC_TIMEOUT_MS: '500',
    TETHER_OPERATION_CLAIM_MS: '1000',
    TETHER_SUBMISSION_SWEEP_INTERVAL_MS: String(TIMER_INTERVAL_MS),
    TETHER_SUBMISSION_RECONCILE_BACKOFF_MS: '100',
  },
}));

interface FakeEdge {
  /** The edge's dispatch records, as a real edge keeps them (dispatch-records.ts). */
  records: Map<string, EdgeDispatchRecord>;
  count(action: string): number;
  stop(): void;
}

describe('send crash boundary: sweep and reconcile', () => {
  let h: HistoryHarness;
  let router: RunningRouter;
  let reconciler: SubmissionReconciler;
  let journal: JournalSequencerService;
  let redis: Redis;
  let edge: FakeEdge;
  let edgeId: string;
  let accessId: string;

  beforeAll(async () => {
    ({ h, router, edgeId, accessId } = chain.stack);
    reconciler = router.app.get(SubmissionReconciler);
    journal = router.app.get(JournalSequencerService);
    redis = router.app.get<Redis>(REDIS);
    edge = fakeEdge();
    await h.nc.flush();
  }, HARNESS_TIMEOUT_MS);

  afterAll(() => edge?.stop());

  function fakeEdge(): FakeEdge {
    const records = new Map<string, EdgeDispatchRecord>();
    const requests: EdgeAgentRPCRequest[] = [];
    const subscription = h.nc.subscribe(h.subjects.edgeRpc(edgeId), {
      callback: (_error, msg) => {
        const rpc = decodeJson<EdgeAgentRPCRequest>(msg.data);
        requests.push(rpc);
        const sid = rpc.request.session_id;
        let reply: EdgeAgentResult;
        if (rpc.request.action === 'dispatch_status') {
          reply = result('ok', {
            session_id: sid,
            dispatch: records.get(rpc.dispatch_id ?? '') ?? { state: 'absent' },
          });
        } else if (rpc.request.action === 'send') {
          reply = result('ok', { session_id: sid, running: true, messages: [{ role: 'user', text: 'x' }] });
          if (rpc.dispatch_id) records.set(rpc.dispatch_id, { state: 'accepted', item_id: 'm:0:0' });
        } else {
          reply = result('ok', { session_id: sid });
        }
        msg.respond(encodeJson(reply));
      },
    });
    return {
      records,
      count: (action) => requests.filter((rpc) => rpc.request.action === action).length,
      stop: () => subscription.unsubscribe(),
    };
  }

  const scope = (sid: string) => ({ session_id: sid, edge_id: edgeId, actor_id: OWNER, access_id: accessId });

  /** A stored session (one edge update through the router, so history keeps it). */
  async function storedSession(): Promise<string> {
    const sid = sessionId();
    await chain.stack.send(chain.stack.update(sid, 1));
    return sid;
  }

  const newId = (at = Date.now()) => `${at}-${randomBytes(16).toString('hex')}`;

  /** The send request a client would retry, with its envelope. */
  function sendRequest(sid: string, id: string): EdgeAgentRequest {
    const body: EdgeAgentRequest = {
      edge_id: edgeId,
      action: 'send',
      session_id: sid,
      access_id: accessId,
      text: 'x',
    };
    return { ...body, client_operation_id: id, payload_fingerprint: operationFingerprint('send', body) };
  }

  /**
   * What a replica that died mid-send leaves: its write-ahead row (submitted a while ago) and a
   * pending ledger record whose claim long expired, with the dispatch started.
   */
  async function orphanedSend(sid: string, submittedAgoMs = 60_000): Promise<Submission> {
    const id = newId(Date.now() - submittedAgoMs);
    const request = sendRequest(sid, id);
    const pending: Submission = {
      client_message_id: id,
      fence: 1,
      payload_fingerprint: request.payload_fingerprint!,
      dispatch_state: 'pending',
      submitted_at: Date.now() - submittedAgoMs,
    };
    await journal.appendSubmission(scope(sid), 1, pending);
    const key = `${h.subjects.namespace}:{${sid}}:op:${id}`;
    await redis.hset(key, {
      fp: request.payload_fingerprint!,
      state: 'pending',
      claim: 'dead-replica',
      claim_until: String(Date.now() - submittedAgoMs + 1_000),
      ts: id.slice(0, 13),
      recorded: String(Date.now() - submittedAgoMs),
      fence: '1',
      dispatching: '1',
    });
    return pending;
  }

  /** A submission's write-ahead (pending) row. */
  async function writeAhead(sid: string, submission: Submission): Promise<void> {
    const { reason: _reason, resolved_at: _resolved, ...pending } = submission;
    await journal.appendSubmission(scope(sid), 1, { ...pending, dispatch_state: 'pending' });
  }

  /** The session's open submissions of one state, as history lists them. */
  async function open(sid: string, state: 'pending' | 'unknown'): Promise<OpenSubmission[]> {
    const { submissions } = await h.call('historyOpenSubmissions', { dispatch_state: state, limit: 200 });
    return submissions.filter((entry) => entry.session_id === sid);
  }

  /** Waits until history shows the submission in `state` (the consumer is asynchronous). */
  async function stored(sid: string, id: string, state: Submission['dispatch_state']): Promise<Submission> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const rows = await h.db.query<{
        dispatch_state: string;
        reason: string | null;
        item_id: string | null;
      }>(
        'SELECT dispatch_state, reason, item_id FROM journal_submissions WHERE session_id = $1 AND client_message_id = $2',
        [sid, id],
      );
      const row = rows.rows[0];
      if (row?.dispatch_state === state) {
        return {
          client_message_id: id,
          fence: 1,
          payload_fingerprint: '',
          dispatch_state: state,
          ...(row.reason ? { reason: row.reason } : {}),
          ...(row.item_id ? { item_id: row.item_id } : {}),
          submitted_at: 0,
        };
      }
      if (Date.now() > deadline)
        throw new Error(`submission ${id} never reached ${state} (is ${row?.dispatch_state})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** How many journal rows wrote this submission (its write-ahead row and each settlement). */
  async function rowsOf(sid: string, id: string): Promise<number> {
    const rows = await h.db.query<{ count: string }>(
      'SELECT count(*) AS count FROM journal WHERE session_id = $1 AND client_message_id = $2',
      [sid, id],
    );
    return Number(rows.rows[0]?.count ?? 0);
  }

  const route = (request: EdgeAgentRequest) =>
    requestService(h.nc, h.subjects, 'routerEdgeAgent', { actor_id: OWNER, request }, { timeoutMs: 20_000 });

  it('turns a send a dead replica left pending into unknown, then accepted from the edge record; never re-sent', async () => {
    const sid = await storedSession();
    const pending = await orphanedSend(sid);
    const id = pending.client_message_id;
    await stored(sid, id, 'pending');
    const sendsBefore = edge.count('send');

    // The edge has no record yet (absence proves nothing): the sweep's unknown stands.
    await reconciler.round();
    expect(await stored(sid, id, 'unknown')).toMatchObject({ reason: RESTART_REASON });
    // A plain retry replays the unknown submission; nothing is dispatched for the user.
    const replay = await route(sendRequest(sid, id));
    expect(replay.operation).toMatchObject({
      replayed: true,
      submission: { dispatch_state: 'unknown', reason: RESTART_REASON },
    });

    // The edge's record of the dispatch id, once asked again after the backoff, settles it.
    edge.records.set(id, { state: 'accepted', item_id: 'm:0:0' });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await reconciler.round();
    expect(await stored(sid, id, 'accepted')).toMatchObject({ reason: RECONCILED_REASON, item_id: 'm:0:0' });
    // The durable answer to "did my send land?" exists, and a retry now replays the acceptance.
    const receipts = await h.db.query(
      'SELECT 1 FROM journal_receipts WHERE session_id = $1 AND client_message_id = $2',
      [sid, id],
    );
    expect(receipts.rowCount).toBe(1);
    expect((await route(sendRequest(sid, id))).operation).toMatchObject({
      replayed: true,
      submission: { dispatch_state: 'accepted', item_id: 'm:0:0' },
    });
    expect(edge.count('send')).toBe(sendsBefore);
  });

  it('sweeps once: a second round appends nothing, and a live run is never swept', async () => {
    const sid = await storedSession();
    const dead = await orphanedSend(sid);
    // An old send a live replica still runs: its claim holds, so only the ledger can tell.
    const live = await orphanedSend(sid);
    await redis.hset(
      `${h.subjects.namespace}:{${sid}}:op:${live.client_message_id}`,
      'claim_until',
      String(Date.now() + 60_000),
    );
    await stored(sid, dead.client_message_id, 'pending');
    await stored(sid, live.client_message_id, 'pending');

    await reconciler.round();
    await stored(sid, dead.client_message_id, 'unknown');
    await reconciler.round();
    await reconciler.round();
    expect(await rowsOf(sid, dead.client_message_id)).toBe(2); // pending, then one unknown
    expect((await open(sid, 'pending')).map((entry) => entry.submission.client_message_id)).toEqual([
      live.client_message_id,
    ]);
    // Its replica dies too (the claim lapses): the next round sweeps it after all.
    await redis.hset(
      `${h.subjects.namespace}:{${sid}}:op:${live.client_message_id}`,
      'claim_until',
      String(Date.now() - 1),
    );
    await reconciler.round();
    expect(await stored(sid, live.client_message_id, 'unknown')).toMatchObject({ reason: RESTART_REASON });
  });

  it('leaves an unknown the edge has no record of unknown, with its own reason, and never resends it', async () => {
    const sid = await storedSession();
    const id = newId();
    const request = sendRequest(sid, id);
    // A dispatch that timed out (no record at the edge: it never arrived, or the edge restarted).
    const unknown: Submission = {
      client_message_id: id,
      fence: 1,
      payload_fingerprint: request.payload_fingerprint!,
      dispatch_state: 'unknown',
      reason: 'dispatch_unconfirmed',
      submitted_at: Date.now() - 1_000,
      resolved_at: Date.now(),
    };
    await writeAhead(sid, unknown);
    await journal.appendSubmission(scope(sid), 1, unknown);
    await stored(sid, id, 'unknown');
    const sendsBefore = edge.count('send');
    const asked = edge.count('dispatch_status');
    for (let round = 0; round < 3; round += 1) {
      await reconciler.round();
      await new Promise((resolve) => setTimeout(resolve, 150)); // past the reconcile backoff
    }
    expect(edge.count('dispatch_status')).toBeGreaterThan(asked);
    expect(await stored(sid, id, 'unknown')).toMatchObject({ reason: 'dispatch_unconfirmed' });
    expect(await rowsOf(sid, id)).toBe(2);
    expect(edge.count('send')).toBe(sendsBefore);
  });

  it('settles an unknown as rejected on the edge’s recorded refusal, and leaves settled ones alone', async () => {
    const sid = await storedSession();
    const refusedId = newId();
    const refusal: Submission = {
      client_message_id: refusedId,
      fence: 1,
      payload_fingerprint: 'a'.repeat(64),
      dispatch_state: 'unknown',
      reason: 'dispatch_unconfirmed',
      submitted_at: Date.now() - 1_000,
    };
    const rejectedId = newId();
    // Each submission's write-ahead row, then its settlement (a settlement alone is ignored).
    await writeAhead(sid, refusal);
    await journal.appendSubmission(scope(sid), 1, refusal);
    await writeAhead(sid, { ...refusal, client_message_id: rejectedId });
    await journal.appendSubmission(scope(sid), 1, {
      ...refusal,
      client_message_id: rejectedId,
      dispatch_state: 'rejected',
      reason: 'busy',
    });
    edge.records.set(refusedId, { state: 'rejected', status: 'busy' });
    // The edge holds an acceptance for the rejected one too: a first-hand refusal stays terminal.
    edge.records.set(rejectedId, { state: 'accepted', item_id: 'm:0:0' });
    await stored(sid, refusedId, 'unknown');
    await stored(sid, rejectedId, 'rejected');
    await reconciler.round();
    expect(await stored(sid, refusedId, 'rejected')).toMatchObject({ reason: 'busy' });
    expect(await stored(sid, rejectedId, 'rejected')).toMatchObject({ reason: 'busy' });
    const receipts = await h.db.query('SELECT 1 FROM journal_receipts WHERE session_id = $1', [sid]);
    expect(receipts.rowCount).toBe(0);
  });

  it('lists open submissions across sessions oldest first, paged by position', async () => {
    const sid = await storedSession();
    const base = Date.now() - 30_000;
    const ids = [newId(base), newId(base), newId(base + 1)];
    for (const [index, id] of ids.entries()) {
      await writeAhead(sid, {
        client_message_id: id,
        fence: 1,
        payload_fingerprint: 'c'.repeat(64),
        dispatch_state: 'pending',
        submitted_at: base + (index === 2 ? 1 : 0),
      });
    }
    for (const id of ids) await stored(sid, id, 'pending');
    const window = { dispatch_state: 'pending' as const, submitted_from: base, submitted_before: base + 2 };
    const seen: string[] = [];
    let after: OpenSubmission['submission'] | undefined;
    for (let page = 0; page < 10; page += 1) {
      const { submissions } = await h.call('historyOpenSubmissions', {
        ...window,
        limit: 1,
        ...(after
          ? {
              after: {
                submitted_at: after.submitted_at,
                session_id: sid,
                client_message_id: after.client_message_id,
              },
            }
          : {}),
      });
      const mine = submissions.filter((entry) => entry.session_id === sid);
      if (submissions.length === 0) break;
      seen.push(...mine.map((entry) => entry.submission.client_message_id));
      after = submissions[0]!.submission;
    }
    const sameInstant = [ids[0]!, ids[1]!].sort();
    expect(seen).toEqual([...sameInstant, ids[2]]);
    expect(
      await h.call('historyOpenSubmissions', { ...window, dispatch_state: 'unknown', limit: 200 }),
    ).toEqual({ submissions: [] });
  });

  it('keeps an unknown unknown while its edge is offline', async () => {
    const sid = await storedSession();
    const id = newId();
    const unknown: Submission = {
      client_message_id: id,
      fence: 1,
      payload_fingerprint: 'b'.repeat(64),
      dispatch_state: 'unknown',
      reason: 'dispatch_unconfirmed',
      submitted_at: Date.now() - 1_000,
    };
    await writeAhead(sid, unknown);
    await journal.appendSubmission(scope(sid), 1, unknown);
    edge.records.set(id, { state: 'accepted', item_id: 'm:0:0' });
    await stored(sid, id, 'unknown');
    edge.stop();
    try {
      await reconciler.round();
      expect(await stored(sid, id, 'unknown')).toMatchObject({ reason: 'dispatch_unconfirmed' });
    } finally {
      edge = fakeEdge();
      edge.records.set(id, { state: 'accepted', item_id: 'm:0:0' });
      await h.nc.flush();
    }
    // Back online, after the backoff: the record settles it.
    await new Promise((resolve) => setTimeout(resolve, 150));
    await reconciler.round();
    expect(await stored(sid, id, 'accepted')).toMatchObject({ item_id: 'm:0:0' });
  });
});
