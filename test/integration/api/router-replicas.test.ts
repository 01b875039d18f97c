// A router replica that dies holds the api's calls, and NATS never tells the api: the api hears
// the replicas' heartbeats and, once one falls silent, sends again every call it may have held
// that can be sent twice with one effect (apps/api/src/common/router-replicas.ts). The router is
// a stand-in that holds a call as a dying replica would; the heartbeats are published here.
import { randomBytes } from 'node:crypto';
import { jest } from '@jest/globals';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { operationFingerprint, type EdgeAgentRequest, type RouterHeartbeat } from '#contracts';
import { encodeJson } from '#messaging';
import { pollUntil, sleep, testServices } from '#test-support';
import { ACCESS, EDGE, SESSION, apiSuite, call, type ApiResponse } from '../../support/api.js';

const PATH = '/api/v1/edge-agents';
/** Short, so a loss is known within two seconds (three intervals of silence), yet far above a stall. */
const INTERVAL_MS = 500;
/** Well past the loss bound: a call still not sent again by then never will be. */
const PAST_LOSS_MS = 6 * INTERVAL_MS + 500;

jest.setTimeout(30_000);

describe('api and lost router replicas', () => {
  const suite = apiSuite('replicas');
  let nc: NatsConnection;

  beforeAll(async () => {
    nc = await connect({ servers: (await testServices()).natsUrl, name: 'test-replicas-heartbeats' });
  });
  afterAll(async () => {
    await nc.drain();
  });

  /** A router replica's heartbeats, until `stop` (a death) or `leave` (a clean exit). */
  function replica() {
    const heartbeat: RouterHeartbeat = {
      instance: randomBytes(12).toString('hex'),
      interval_ms: INTERVAL_MS,
    };
    const publish = (beat: RouterHeartbeat) =>
      nc.publish(suite.api.subjects.routerHeartbeat, encodeJson(beat));
    publish(heartbeat);
    const timer = setInterval(() => publish(heartbeat), INTERVAL_MS);
    return {
      stop: () => clearInterval(timer),
      leave: () => {
        clearInterval(timer);
        publish({ ...heartbeat, leaving: true });
      },
    };
  }

  /**
   * The router stand-in holds its first call until `release` (as a replica that took it and then
   * died, or one that is merely slow) and answers every later one at once.
   */
  function holdFirstCall() {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const answer = { version: 1, status: 'ok', session_id: SESSION, revision: 3 };
    suite.api.standIns.handlers.routerEdgeAgent = () =>
      suite.api.standIns.received('routerEdgeAgent').length === 1 ? held.then(() => answer) : answer;
    return { release: () => release() };
  }

  const received = () => suite.api.standIns.received('routerEdgeAgent');
  const base = { edge_id: EDGE, session_id: SESSION, access_id: ACCESS.id };

  /** Starts `body` through the api and waits until the router stand-in holds it. */
  async function held(body: Record<string, unknown>): Promise<{ reply: Promise<ApiResponse> }> {
    const reply = call(suite.api, 'POST', PATH, { token: suite.alice, body });
    expect(
      await pollUntil(
        () => received().length,
        (count) => count >= 1,
      ),
    ).toBe(1);
    return { reply };
  }

  it('sends a watch again once the replica that may hold it falls silent', async () => {
    const router = replica();
    const hold = holdFirstCall();
    await sleep(INTERVAL_MS);
    const { reply } = await held({ ...base, action: 'watch', cursor: '2' });
    router.stop();
    const response = await reply;
    expect(response.status).toBe(200);
    expect(response.body['data']).toMatchObject({ status: 'ok', revision: 3 });
    expect(received()).toHaveLength(2);
    expect(received()[1]).toEqual(received()[0]);
    hold.release();
  });

  it('sends an enveloped send again with the same operation id, for the ledger to replay', async () => {
    const router = replica();
    const hold = holdFirstCall();
    await sleep(INTERVAL_MS);
    const send = {
      ...base,
      action: 'send',
      text: 'once',
      client_operation_id: `${Date.now()}-${'a'.repeat(32)}`,
    };
    const body = { ...send, payload_fingerprint: operationFingerprint('send', send as EdgeAgentRequest) };
    const { reply } = await held(body);
    router.stop();
    expect((await reply).status).toBe(200);
    expect(received()).toHaveLength(2);
    expect(received().map((one) => (one['request'] as EdgeAgentRequest).client_operation_id)).toEqual([
      body.client_operation_id,
      body.client_operation_id,
    ]);
    hold.release();
  });

  const watch = { ...base, action: 'watch', cursor: '2' };
  const garbage = () => {
    nc.publish(suite.api.subjects.routerHeartbeat, new TextEncoder().encode('{not json'));
    nc.publish(suite.api.subjects.routerHeartbeat, encodeJson({ instance: 'NOT-HEX', interval_ms: 1 }));
  };
  it.each([
    ['a mutation without the envelope', { ...base, action: 'send', text: 'maybe twice?' }, 'stop'],
    ['a call held by a replica that left cleanly', watch, 'leave'],
    ['a call when only garbage arrives on the subject', watch, 'garbage'],
  ] as const)('never sends again %s', async (_case, body, how) => {
    const router = how === 'garbage' ? null : replica();
    const hold = holdFirstCall();
    await sleep(INTERVAL_MS);
    const { reply } = await held(body);
    if (how === 'garbage') garbage();
    else router?.[how]();
    await sleep(PAST_LOSS_MS);
    expect(received()).toHaveLength(1);
    hold.release();
    expect((await reply).status).toBe(200);
  });
});
