// Idempotent mutations through real routers (two replicas), Redis and JetStream, with a raw NATS
// responder as the edge: the host cases of reference orca §7 and the crash boundary of §9.4.
import { result, type EdgeAgentRequest } from '#contracts';
import { decodeJson, encodeJson, requestService } from '#messaging';
import { createSuite, sessionId, sessionUpdate, type Suite } from '../../support/router.js';
import {
  enveloped,
  newOperationId as newId,
  okFor,
  OPERATIONS_ACTOR as ACTOR,
  operationsHelpers,
} from '../../support/router-operations.js';

describe('router idempotent mutations', () => {
  let suite: Suite;

  beforeAll(async () => {
    suite = await createSuite('operations');
    const env = {
      TETHER_EDGE_RPC_TIMEOUT_MS: '800',
      TETHER_OPERATION_CLAIM_MS: '3000',
      TETHER_OPERATION_WAIT_MS: '8000',
      TETHER_OPERATIONS_PER_SESSION_MAX: '4',
    };
    await suite.startRouter(env);
    await suite.startRouter(env);
  });
  afterAll(async () => {
    await suite.cleanup();
  });

  const { edge, knownSession, route, storedOn, journal, submissionStates } = operationsHelpers(
    () => suite,
    400,
  );

  const records = (sid: string) => suite.keys(`${suite.namespace}:{${sid}}:op:*`);

  it('refuses a session the router does not journal, or another caller’s, as ownership_unknown', async () => {
    const fake = await edge();
    const unknown = await route(
      enveloped('send', { edge_id: fake.edgeId, session_id: sessionId(), text: 'hi' }),
    );
    expect(unknown.status).toBe('not_found');
    expect(unknown.operation?.refusal?.code).toBe('agent_session_ownership_unknown');
    const sid = await knownSession(fake.edgeId);
    const other = await route(
      enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'hi' }),
      'user-2',
    );
    expect(other.operation?.refusal?.code).toBe('agent_session_ownership_unknown');
    expect(fake.requests).toHaveLength(0);
    expect(await records(sid)).toEqual([]);
    fake.stop();
  });

  it('admits an enveloped send right after start, before the edge has published any update', async () => {
    // The edge answers start but publishes nothing (its own update is asynchronous and may come
    // late): the router journals the start's snapshot before answering, so the session is bound.
    const started = sessionId();
    const fake = await edge((rpc) =>
      rpc.request.action === 'start'
        ? result('ok', { session_id: started, revision: 1, running: false })
        : okFor(rpc),
    );
    const start = await route({
      edge_id: fake.edgeId,
      action: 'start',
      installation_id: 'a'.repeat(32),
      project: '/p',
    });
    expect(start).toMatchObject({ status: 'ok', session_id: started });
    const send = await route(enveloped('send', { edge_id: fake.edgeId, session_id: started, text: 'hi' }));
    expect(send.operation?.refusal).toBeUndefined();
    expect(send.operation?.submission?.dispatch_state).toBe('accepted');
    const rows = await journal(started);
    expect(rows[0]).toMatchObject({ actor_id: ACTOR, edge_id: fake.edgeId, revision: 1 });
    expect(await submissionStates(started)).toEqual(['pending', 'accepted']);
    // Another caller still cannot use it.
    const other = await route(
      enveloped('send', { edge_id: fake.edgeId, session_id: started, text: 'hi' }),
      'user-2',
    );
    expect(other.operation?.refusal?.code).toBe('agent_session_ownership_unknown');
    fake.stop();
  });

  it('refuses a wrong fingerprint as a conflict and writes no record', async () => {
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'hi' });
    const reply = await route({ ...request, text: 'something else' });
    expect(reply.status).toBe('invalid_request');
    expect(reply.operation?.refusal?.code).toBe('agent_session_operation_conflict');
    expect(await records(sid)).toEqual([]);
    expect(fake.requests).toHaveLength(0);
    // The honest request with that id still runs.
    expect((await route(request)).status).toBe('ok');
    fake.stop();
  });

  it('journals the submission before dispatch, accepts it, and replays a retry with one dispatch', async () => {
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'hello' });
    const first = await route(request);
    expect(first.status).toBe('ok');
    expect(first.messages).toEqual([{ role: 'user', text: 'hello' }]);
    expect(first.operation).toMatchObject({
      client_operation_id: request.client_operation_id,
      replayed: false,
      fence: 1,
      submission: {
        client_message_id: request.client_operation_id,
        fence: 1,
        payload_fingerprint: request.payload_fingerprint,
        dispatch_state: 'accepted',
        item_id: 'm:0:0',
      },
    });
    // The edge never sees the envelope.
    expect(fake.requests[0]?.request).toEqual({
      edge_id: fake.edgeId,
      action: 'send',
      session_id: sid,
      text: 'hello',
    });

    const retry = await route(request);
    expect(retry.status).toBe('ok');
    expect(retry.operation?.replayed).toBe(true);
    expect(retry.operation?.submission?.dispatch_state).toBe('accepted');
    expect(fake.count('send')).toBe(1);

    const rows = await journal(sid);
    expect(rows.map((row) => row.sequence)).toEqual([1, 2, 3]);
    expect(await submissionStates(sid)).toEqual(['pending', 'accepted']);
    // Every row carries the runtime fence; the submission rows repeat the head revision.
    expect(rows.map((row) => row.fence)).toEqual([1, 1, 1]);
    expect(rows.map((row) => row.revision)).toEqual([1, 1, 1]);
    fake.stop();
  });

  it('answers a send whose pending row cannot be stored without an outcome, so the same id runs on retry', async () => {
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    // A replica died holding the session's append lock: it lapses only after its TTL.
    const lock = suite.redisKeys.appendLock(sid);
    await suite.redis.set(lock, 'dead-replica', 'PX', 60_000);
    const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'hello' });
    const refused = await route(request);
    // Nothing happened and nothing is recorded: no operation, the answer of a router that never answered.
    expect(refused).toEqual(result('unavailable', { session_id: sid }));
    expect(fake.count('send')).toBe(0);
    expect(await submissionStates(sid)).toEqual([]);
    expect(await records(sid)).toEqual([]);

    await suite.redis.del(lock);
    const retried = await route(request);
    expect(retried.status).toBe('ok');
    expect(retried.operation).toMatchObject({ replayed: false, submission: { dispatch_state: 'accepted' } });
    expect(fake.count('send')).toBe(1);
    fake.stop();
    // The refused attempt waits out the append lock's acquire bound (5 s) first.
  }, 20_000);

  it('gives concurrent duplicates on two replicas one effect', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'once' });
    const replies = await Promise.all(
      Array.from({ length: 8 }, async (_unused, index) => {
        if (index === 0) release();
        else await gate;
        return route(request);
      }),
    );
    expect(replies.every((reply) => reply.status === 'ok')).toBe(true);
    expect(replies.filter((reply) => reply.operation?.replayed === false)).toHaveLength(1);
    expect(fake.count('send')).toBe(1);
    expect(await submissionStates(sid)).toEqual(['pending', 'accepted']);
    fake.stop();
  });

  it('settles a timed-out send as unknown, never rejected, and never sends it again', async () => {
    const fake = await edge((rpc) => (rpc.request.action === 'send' ? 'silent' : okFor(rpc)));
    const sid = await knownSession(fake.edgeId);
    const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'lost?' });
    const first = await route(request);
    expect(first.status).toBe('ok');
    expect(first.operation?.submission).toMatchObject({
      dispatch_state: 'unknown',
      reason: 'dispatch_unconfirmed',
    });
    const retry = await route(request);
    expect(retry.status).toBe('ok');
    expect(retry.operation).toMatchObject({ replayed: true, submission: { dispatch_state: 'unknown' } });
    expect(fake.count('send')).toBe(1);
    expect(await submissionStates(sid)).toEqual(['pending', 'unknown']);
    fake.stop();
  });

  it('dispatches an unknown send again only on retry_unknown, under the same dispatch id and submission', async () => {
    let sends = 0;
    const fake = await edge((rpc) => {
      if (rpc.request.action !== 'send') return okFor(rpc);
      sends += 1;
      return sends === 1 ? 'silent' : okFor(rpc);
    });
    const sid = await knownSession(fake.edgeId);
    const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'again' });
    expect((await route(request)).operation?.submission?.dispatch_state).toBe('unknown');
    // A plain retry replays; retry_unknown on it is a control flag, outside the fingerprint.
    expect((await route(request)).operation).toMatchObject({ replayed: true });
    expect(fake.count('send')).toBe(1);
    const retried = await route({ ...request, retry_unknown: true });
    expect(retried.status).toBe('ok');
    expect(retried.operation).toMatchObject({
      replayed: false,
      submission: {
        client_message_id: request.client_operation_id,
        dispatch_state: 'accepted',
        item_id: 'm:0:0',
      },
    });
    // Both dispatches named the operation, so the edge could answer the second with the first.
    const dispatched = fake.requests.filter((rpc) => rpc.request.action === 'send');
    expect(dispatched.map((rpc) => rpc.dispatch_id)).toEqual([
      request.client_operation_id,
      request.client_operation_id,
    ]);
    expect(dispatched.every((rpc) => rpc.request.retry_unknown === undefined)).toBe(true);
    // Settled now: neither a plain retry nor another retry_unknown dispatches again.
    expect((await route({ ...request, retry_unknown: true })).operation).toMatchObject({
      replayed: true,
      submission: { dispatch_state: 'accepted' },
    });
    expect(fake.count('send')).toBe(2);
    // One submission: its write-ahead row, the unknown settlement, then the acceptance.
    expect(await submissionStates(sid)).toEqual(['pending', 'unknown', 'accepted']);
    fake.stop();
  });

  it('keeps a send unknown when its retry_unknown never reaches an edge', async () => {
    const silent = await edge((rpc) => (rpc.request.action === 'send' ? 'silent' : okFor(rpc)));
    const sid = await knownSession(silent.edgeId);
    const request = enveloped('send', { edge_id: silent.edgeId, session_id: sid, text: 'where?' });
    expect((await route(request)).operation?.submission?.dispatch_state).toBe('unknown');
    silent.stop();
    await suite.nc.flush();
    // Nobody listens now: that proves nothing about the first copy, so no `rejected` is written.
    const retried = await route({ ...request, retry_unknown: true });
    expect(retried.status).toBe('unavailable');
    expect(retried.operation?.submission).toMatchObject({
      dispatch_state: 'unknown',
      reason: 'dispatch_unconfirmed',
    });
    expect(await submissionStates(sid)).toEqual(['pending', 'unknown']);
    // Still unknown in the ledger too: a later retry_unknown may still dispatch it.
    expect((await route({ ...request, retry_unknown: true })).operation?.submission?.dispatch_state).toBe(
      'unknown',
    );
  });

  it('never dispatches an accepted or rejected send again for retry_unknown', async () => {
    const fake = await edge((rpc) => (rpc.request.action === 'send' ? result('busy') : okFor(rpc)));
    const sid = await knownSession(fake.edgeId);
    const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'no' });
    expect((await route(request)).operation?.submission?.dispatch_state).toBe('rejected');
    const retried = await route({ ...request, retry_unknown: true });
    expect(retried.status).toBe('busy');
    expect(retried.operation).toMatchObject({ replayed: true, submission: { dispatch_state: 'rejected' } });
    expect(fake.count('send')).toBe(1);
    fake.stop();
  });

  it('settles an unreadable answer as unknown, and a send nobody received as rejected', async () => {
    const garbled = await edge((rpc) => (rpc.request.action === 'send' ? 'garbage' : okFor(rpc)));
    const sid = await knownSession(garbled.edgeId);
    const unreadable = await route(
      enveloped('send', { edge_id: garbled.edgeId, session_id: sid, text: 'x' }),
    );
    expect(unreadable.operation?.submission?.dispatch_state).toBe('unknown');
    garbled.stop();

    const gone = await edge();
    const other = await knownSession(gone.edgeId);
    gone.stop();
    await suite.nc.flush();
    const request = enveloped('send', { edge_id: gone.edgeId, session_id: other, text: 'x' });
    const refused = await route(request);
    expect(refused.status).toBe('unavailable');
    expect(refused.operation?.submission).toMatchObject({
      dispatch_state: 'rejected',
      reason: 'unavailable',
    });
    // A first-hand refusal is the recorded answer.
    expect((await route(request)).operation).toMatchObject({
      replayed: true,
      submission: { dispatch_state: 'rejected' },
    });
    expect(await submissionStates(other)).toEqual(['pending', 'rejected']);
  });

  it('refuses a stale fence with the current one and leaves no row a retry would replay', async () => {
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    const id = newId();
    const stale = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'f' }, id, {
      expected_runtime_fence: 7,
    });
    const refused = await route(stale);
    expect(refused.status).toBe('invalid_request');
    expect(refused.operation?.refusal).toMatchObject({
      code: 'agent_session_checkpoint_stale',
      current_fence: 1,
    });
    expect(await records(sid)).toEqual([]);
    expect(fake.requests).toHaveLength(0);
    // The same id at the current fence runs for the first time.
    const current = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'f' }, id, {
      expected_runtime_fence: 1,
    });
    const ran = await route(current);
    expect(ran.operation).toMatchObject({ replayed: false, submission: { dispatch_state: 'accepted' } });
    expect(fake.count('send')).toBe(1);
    fake.stop();
  });

  it('answers invalid, future and expired ids without a record', async () => {
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    const base = { edge_id: fake.edgeId, session_id: sid, text: 't' };
    const malformed = await route(enveloped('send', base, 'not-an-operation-id'));
    expect(malformed.operation?.refusal?.code).toBe('agent_session_operation_invalid');
    const future = await route(enveloped('send', base, newId(Date.now() + 10 * 60_000)));
    expect(future.operation?.refusal?.code).toBe('agent_session_operation_invalid');
    const expired = await route(enveloped('send', base, newId(Date.now() - 25 * 60 * 60_000)));
    expect(expired.status).toBe('invalid_request');
    expect(expired.operation?.refusal?.code).toBe('agent_session_operation_expired');
    expect(await records(sid)).toEqual([]);
    expect(fake.requests).toHaveLength(0);
    fake.stop();
  });

  it('refuses new ids beyond the live-record bound, and still replays the recorded ones', async () => {
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    const requests = ['read-only', 'workspace-write', 'read-only', 'workspace-write'].map((mode) =>
      enveloped('permissions', {
        edge_id: fake.edgeId,
        session_id: sid,
        permission_mode: mode as 'read-only',
      }),
    );
    for (const request of requests) expect((await route(request)).status).toBe('ok');
    const over = await route(
      enveloped('permissions', { edge_id: fake.edgeId, session_id: sid, permission_mode: 'read-only' }),
    );
    expect(over.status).toBe('busy');
    expect(over.operation?.refusal?.code).toBe('agent_session_operation_capacity');
    expect((await route(requests[0]!)).operation?.replayed).toBe(true);
    expect(fake.count('permissions')).toBe(4);
    fake.stop();
  });

  it('never interrupts twice on a replay', async () => {
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    const request = enveloped('interrupt', { edge_id: fake.edgeId, session_id: sid });
    expect((await route(request)).operation?.replayed).toBe(false);
    const replay = await route(request);
    expect(replay.status).toBe('ok');
    expect(replay.operation?.replayed).toBe(true);
    expect(fake.count('interrupt')).toBe(1);
    // Named by the operation id, so the edge itself would run it once even without this ledger.
    expect(fake.requests.find((rpc) => rpc.request.action === 'interrupt')?.dispatch_id).toBe(
      request.client_operation_id,
    );
    fake.stop();
  });

  it('answers operation_unknown for a model change the edge never confirmed, first and on retry', async () => {
    const fake = await edge((rpc) => (rpc.request.action === 'model' ? 'silent' : okFor(rpc)));
    const sid = await knownSession(fake.edgeId);
    const request = enveloped('model', { edge_id: fake.edgeId, session_id: sid, model: 'm2' });
    const first = await route(request);
    expect(first.status).toBe('unavailable');
    expect(first.operation?.refusal?.code).toBe('agent_session_operation_unknown');
    const retry = await route(request);
    expect(retry.operation).toMatchObject({
      replayed: true,
      refusal: { code: 'agent_session_operation_unknown' },
    });
    expect(fake.count('model')).toBe(1);
    fake.stop();
  });

  describe('prompt answers', () => {
    it('commits the first answer; a second client loses with the winner’s resolution', async () => {
      const fake = await edge();
      const sid = await knownSession(fake.edgeId);
      const prompt = { edge_id: fake.edgeId, session_id: sid, approval_id: 'a1'.repeat(16) };
      const winner = await route(
        enveloped('approve', { ...prompt, decision: 'accept' }, newId(), { expected_revision: 1 }),
      );
      expect(winner.status).toBe('ok');
      expect(winner.operation?.resolution).toMatchObject({
        resolved: true,
        selected_option_id: 'accept',
        resolved_by: ACTOR,
      });
      const loser = await route(
        enveloped('approve', { ...prompt, decision: 'decline' }, newId(), { expected_revision: 1 }),
      );
      expect(loser.status).toBe('invalid_request');
      expect(loser.operation?.refusal).toMatchObject({
        code: 'agent_session_item_revision_stale',
        current_revision: 2,
        resolution: { resolved: true, selected_option_id: 'accept', resolved_by: ACTOR },
      });
      const late = await route(
        enveloped('approve', { ...prompt, decision: 'decline' }, newId(), { expected_revision: 2 }),
      );
      expect(late.operation?.refusal?.code).toBe('agent_session_already_resolved');
      expect(fake.count('approve')).toBe(1);
      fake.stop();
    });

    it('rolls the answer back when the edge refuses it first-hand, so another answer can win', async () => {
      let refuse = true;
      const fake = await edge((rpc) =>
        rpc.request.action === 'answer' && refuse ? result('invalid_request') : okFor(rpc),
      );
      const sid = await knownSession(fake.edgeId);
      const answer = (text: string) =>
        enveloped('answer', {
          edge_id: fake.edgeId,
          session_id: sid,
          input_id: 'b1'.repeat(16),
          answers: [{ question_id: 'q', answers: [text] }],
        });
      const refused = await route(answer('first'));
      expect(refused.status).toBe('invalid_request');
      expect(refused.operation?.refusal).toBeUndefined();
      refuse = false;
      const accepted = await route(answer('second'));
      expect(accepted.status).toBe('ok');
      expect(accepted.operation?.resolution?.selected_option_id).toBe(
        '[{"answers":["second"],"question_id":"q"}]',
      );
      fake.stop();
    });

    it('keeps an answer whose delivery timed out and answers ok', async () => {
      const fake = await edge((rpc) => (rpc.request.action === 'approve' ? 'silent' : okFor(rpc)));
      const sid = await knownSession(fake.edgeId);
      const request = enveloped('approve', {
        edge_id: fake.edgeId,
        session_id: sid,
        approval_id: 'a2'.repeat(16),
        decision: 'accept',
      });
      const reply = await route(request);
      expect(reply.status).toBe('ok');
      expect(reply.operation?.resolution?.selected_option_id).toBe('accept');
      const other = await route(
        enveloped('approve', {
          edge_id: fake.edgeId,
          session_id: sid,
          approval_id: 'a2'.repeat(16),
          decision: 'decline',
        }),
      );
      expect(other.operation?.refusal?.code).toBe('agent_session_item_revision_stale');
      expect(fake.count('approve')).toBe(1);
      fake.stop();
    });
  });

  describe('crash boundary', () => {
    /** A pending record as a replica that died mid-run leaves it (its claim long expired). */
    async function orphan(sid: string, request: EdgeAgentRequest, dispatching: boolean) {
      const key = `${suite.namespace}:{${sid}}:op:${request.client_operation_id}`;
      const now = Date.now();
      await suite.redis.hset(key, {
        fp: request.payload_fingerprint!,
        state: 'pending',
        claim: 'dead-replica',
        claim_until: String(now - 1),
        ts: request.client_operation_id!.slice(0, 13),
        recorded: String(now - 5_000),
        fence: '1',
        ...(dispatching ? { dispatching: '1' } : {}),
      });
      await suite.redis.pexpire(key, 60_000);
    }

    it('settles a send whose replica died after dispatching as unknown and never re-sends it', async () => {
      const fake = await edge();
      const sid = await knownSession(fake.edgeId);
      const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'orphan' });
      await orphan(sid, request, true);
      const reply = await route(request);
      expect(reply.status).toBe('ok');
      expect(reply.operation).toMatchObject({
        replayed: true,
        submission: { dispatch_state: 'unknown', reason: 'router_lost_before_acknowledgement' },
      });
      expect((await route(request)).operation?.submission?.dispatch_state).toBe('unknown');
      expect(fake.count('send')).toBe(0);
      expect(await submissionStates(sid)).toEqual(['unknown']);
      fake.stop();
    });

    it('takes over a send whose replica died before dispatching and runs it once', async () => {
      const fake = await edge();
      const sid = await knownSession(fake.edgeId);
      const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'resumed' });
      await orphan(sid, request, false);
      const replies = await Promise.all([route(request), route(request), route(request)]);
      expect(replies.every((reply) => reply.operation?.submission?.dispatch_state === 'accepted')).toBe(true);
      expect(fake.count('send')).toBe(1);
      fake.stop();
    });
  });

  it('moves the runtime fence on resume and stamps it on later rows', async () => {
    const fake = await edge();
    const accessId = 'c'.repeat(32);
    const sid = sessionId();
    await requestService(
      suite.nc,
      suite.subjects,
      'routerSessionUpdate',
      sessionUpdate({ session_id: sid, revision: 1, edge_id: fake.edgeId, access_id: accessId }),
      { timeoutMs: 10_000 },
    );
    const history = suite.nc.subscribe(suite.subjects.requests.historyResumeSeed, {
      callback: (_error, msg) => {
        msg.respond(encodeJson({ state: 'stored', resume: { session_id: sid, revision: 1 } }));
      },
    });
    await suite.nc.flush();
    const base = { edge_id: fake.edgeId, session_id: sid, access_id: accessId };
    expect((await route({ ...base, action: 'resume' })).status).toBe('ok');
    const stale = await route(
      enveloped('permissions', { ...base, permission_mode: 'read-only' }, newId(), {
        expected_runtime_fence: 1,
      }),
    );
    expect(stale.operation?.refusal).toMatchObject({
      code: 'agent_session_checkpoint_stale',
      current_fence: 2,
    });
    const current = await route(
      enveloped('permissions', { ...base, permission_mode: 'read-only' }, newId(), {
        expected_runtime_fence: 2,
      }),
    );
    expect(current.status).toBe('ok');
    expect(current.operation).toMatchObject({ replayed: false, fence: 2 });
    await requestService(
      suite.nc,
      suite.subjects,
      'routerSessionUpdate',
      sessionUpdate({ session_id: sid, revision: 2, edge_id: fake.edgeId, access_id: accessId }),
      { timeoutMs: 10_000 },
    );
    expect((await journal(sid)).map((row) => row.fence)).toEqual([1, 2]);
    history.unsubscribe();
    fake.stop();
  });

  it('keeps lifecycle events exact when submission rows sit between edge rows', async () => {
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    const update = (revision: number, running: boolean) =>
      requestService(
        suite.nc,
        suite.subjects,
        'routerSessionUpdate',
        sessionUpdate({
          session_id: sid,
          revision,
          edge_id: fake.edgeId,
          snapshot: result('ok', { session_id: sid, revision, running }),
        }),
        { timeoutMs: 10_000 },
      );
    // pending row, then the turn's first edge row, then the accepted row, then more of the turn.
    await route(enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'go' }));
    await update(2, true);
    await route(enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'again' }));
    await update(3, true);
    await update(3, true);
    await update(4, false);
    const types = (await storedOn(suite.subjects.sessionLifecycle(sid))).map(
      (data) => decodeJson<{ type: string }>(data).type,
    );
    expect(types.filter((type) => type === 'turn.started')).toHaveLength(1);
    expect(types.filter((type) => type === 'turn.completed')).toHaveLength(1);
    fake.stop();
  });

  it('re-seeds the journal head from a submission row when Redis lost it', async () => {
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    await route(enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'a' }));
    const before = await journal(sid);
    await suite.redis.del(
      ...['rev', 'epoch', 'seq', 'jsseq', 'fence'].map((key) => `${suite.namespace}:{${sid}}:${key}`),
    );
    const ack = await requestService(
      suite.nc,
      suite.subjects,
      'routerSessionUpdate',
      sessionUpdate({ session_id: sid, revision: 2, edge_id: fake.edgeId }),
      { timeoutMs: 10_000 },
    );
    expect(ack).toMatchObject({ epoch: before[0]!.epoch, sequence: 4, duplicate: false });
    const after = await journal(sid);
    expect(after.at(-1)).toMatchObject({ sequence: 4, revision: 2, fence: 1 });
    fake.stop();
  });
});
