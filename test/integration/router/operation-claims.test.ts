// A replica's claim on a running operation is short and renewed while the run lasts: a live run is
// never taken over however long its edge takes, and a claim nobody renews (its replica died) runs
// out after one claim's length. Real routers (two replicas), Redis and JetStream, with a raw NATS
// responder as the edge.
import { jest } from '@jest/globals';
import type { EdgeAgentResult } from '#contracts';
import { pollUntil, sleep } from '#test-support';
import { createSuite, type Suite } from '../../support/router.js';
import { enveloped, okFor, operationsHelpers } from '../../support/router-operations.js';

/** Short, so that a run outlasts several claims while the edge still answers in time. */
const CLAIM_MS = 1_500;
const EDGE_RPC_TIMEOUT_MS = 8_000;

jest.setTimeout(30_000);

describe('router operation claims', () => {
  let suite: Suite;

  beforeAll(async () => {
    suite = await createSuite('claims');
    const env = {
      TETHER_EDGE_RPC_TIMEOUT_MS: String(EDGE_RPC_TIMEOUT_MS),
      TETHER_OPERATION_CLAIM_MS: String(CLAIM_MS),
      TETHER_OPERATION_WAIT_MS: '15000',
    };
    await suite.startRouter(env);
    await suite.startRouter(env);
  });
  afterAll(async () => {
    await suite.cleanup();
  });

  const { edge, knownSession, route, submissionStates } = operationsHelpers(() => suite, 700);

  const claimUntil = async (sid: string, id: string) =>
    Number(await suite.redis.hget(suite.redisKeys.operation(sid, id), 'claim_until'));

  it('keeps a live run’s claim past its length, so a duplicate waits for the run instead of taking it over', async () => {
    let answerSend: () => void = () => undefined;
    const fake = await edge((rpc) =>
      rpc.request.action === 'send'
        ? new Promise<EdgeAgentResult>((resolve) => (answerSend = () => resolve(okFor(rpc))))
        : okFor(rpc),
    );
    const sid = await knownSession(fake.edgeId);
    const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'slow edge' });
    const first = route(request);
    expect(
      await pollUntil(
        () => fake.count('send'),
        (count) => count === 1,
      ),
    ).toBe(1);
    const admitted = await claimUntil(sid, request.client_operation_id!);

    // Three claims' lengths with the edge still working: the claim as admitted ran out long ago.
    await sleep(3 * CLAIM_MS);
    const renewed = await claimUntil(sid, request.client_operation_id!);
    expect(renewed).toBeGreaterThan(admitted);
    expect(renewed).toBeGreaterThan(Date.now());
    const duplicate = route(request);
    await sleep(CLAIM_MS);
    answerSend();

    const replies = await Promise.all([first, duplicate]);
    expect(replies[0].operation).toMatchObject({
      replayed: false,
      submission: { dispatch_state: 'accepted' },
    });
    expect(replies[1].operation).toMatchObject({
      replayed: true,
      submission: { dispatch_state: 'accepted' },
    });
    expect(fake.count('send')).toBe(1);
    expect(await submissionStates(sid)).toEqual(['pending', 'accepted']);
    fake.stop();
  });

  it('stops renewing once the run settles', async () => {
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'quick' });
    expect((await route(request)).operation?.submission?.dispatch_state).toBe('accepted');
    const key = suite.redisKeys.operation(sid, request.client_operation_id!);
    expect(await suite.redis.hget(key, 'claim_until')).toBe('0');
    await sleep(2 * CLAIM_MS);
    expect(await suite.redis.hmget(key, 'state', 'claim_until')).toEqual(['succeeded', '0']);
    fake.stop();
  });

  it('lets a resend take over, within a claim’s length, a claim its replica stopped renewing', async () => {
    const fake = await edge();
    const sid = await knownSession(fake.edgeId);
    const request = enveloped('send', { edge_id: fake.edgeId, session_id: sid, text: 'orphan' });
    // What a replica that died right after its admission leaves: a live claim nobody renews.
    const key = suite.redisKeys.operation(sid, request.client_operation_id!);
    const now = Date.now();
    await suite.redis.hset(key, {
      fp: request.payload_fingerprint!,
      state: 'pending',
      claim: 'dead-replica',
      claim_until: String(now + CLAIM_MS),
      ts: request.client_operation_id!.slice(0, 13),
      recorded: String(now),
      fence: '1',
    });
    await suite.redis.pexpire(key, 60_000);

    const reply = await route(request);
    expect(reply.operation).toMatchObject({ replayed: false, submission: { dispatch_state: 'accepted' } });
    expect(fake.count('send')).toBe(1);
    expect(await suite.redis.hget(key, 'claim')).not.toBe('dead-replica');
    fake.stop();
  });
});
