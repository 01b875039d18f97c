// Per-user and per-edge limits at the api (docs/security.md "Limits per user"): over its request
// rate a user gets 429 with Retry-After while another user is served; an edge over its rate
// likewise; concurrent watches are bounded per user and per edge and free again when they end.
// Refusals cost nothing downstream: the stand-ins see no call for them.
import { jest } from '@jest/globals';
import type { IncomingMessage } from 'node:http';
import type { UserLimitsConfig } from '../../../apps/api/src/config.js';
import { untraced } from '../../../libs/telemetry/src/untraced.js';
import {
  ACCESS,
  ALICE,
  BOB,
  BOB_ACCESS,
  BOB_EDGE,
  call,
  EDGE,
  startApi,
  token,
  type Harness,
  expectError,
} from '../../support/api.js';

jest.setTimeout(60_000);

const UNLIMITED = { perSecond: 100_000, burst: 100_000 };
const LIMITS: UserLimitsConfig = {
  // Slow refill: the burst is what a test can spend, and nothing refills during it.
  userRate: { perSecond: 1, burst: 5 },
  edgeRate: UNLIMITED,
  userStreams: 100,
  edgeStreams: 100,
  userWatches: 2,
  edgeWatches: 100,
};

describe('per-user request rate', () => {
  let api: Harness;
  afterAll(() => api?.close());

  it('refuses a user over its rate with 429 and Retry-After, and serves another user meanwhile', async () => {
    api = await startApi('limitsrate', undefined, undefined, { limits: LIMITS });
    const alice = await token(ALICE);
    const bob = await token(BOB);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      statuses.push((await call(api, 'GET', '/api/v1/edge-agents/connectors', { token: alice })).status);
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    const refused = await call(api, 'GET', '/api/v1/edge-agents/connectors', { token: alice });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body).toEqual({ code: 429, message: 'too many requests' });
    // Only the five admitted calls reached history.
    expect(api.standIns.received('historyConnectorList')).toHaveLength(5);
    expect((await call(api, 'GET', '/api/v1/edge-agents/connectors', { token: bob })).status).toBe(200);
  });
});

describe('refusing early', () => {
  let api: Harness;
  afterAll(() => api?.close());

  it('answers an over-rate caller alike whether the early hook or the guard refuses, and never refuses an unguarded route', async () => {
    api = await startApi('limitsearly', undefined, undefined, { limits: LIMITS });
    const alice = await token(ALICE);
    for (let i = 0; i < 5; i++) {
      expect((await call(api, 'GET', '/api/v1/edge-agents/connectors', { token: alice })).status).toBe(200);
    }
    // A token the api verified before: refused by the onRequest hook, before Nest.
    const early = await call(api, 'GET', '/api/v1/edge-agents/connectors', { token: alice });
    // A token of the same user it has never seen: verified, then refused by the guard.
    const fresh = await token(ALICE, { expiresIn: 301 });
    const guarded = await call(api, 'GET', '/api/v1/edge-agents/connectors', { token: fresh });
    for (const refused of [early, guarded]) {
      expectError(refused, 429, 'too many requests');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get('cache-control')).toBe('no-store');
    }
    expect(api.standIns.received('historyConnectorList')).toHaveLength(5);
    // The rate covers authenticated routes only: the OpenAPI document is still served.
    expect((await call(api, 'GET', '/api/v1/openapi.json', { token: alice })).status).toBe(200);

    // What the early hook refuses is not traced either (a flood costs no instrumented request);
    // a caller within its rate, or one the api has not verified yet, is.
    const incoming = (url: string, bearer: string) =>
      ({ url, headers: { authorization: `Bearer ${bearer}` } }) as IncomingMessage;
    expect(untraced(incoming('/api/v1/edge-agents/connectors', alice))).toBe(true);
    expect(untraced(incoming('/api/v1/edge-agents/connectors', await token(BOB)))).toBe(false);
    expect(untraced(incoming('/api/v1/openapi.json', alice))).toBe(false);
    expect(untraced(incoming('/readyz', alice))).toBe(true);
  });
});

describe('per-edge request rate', () => {
  let api: Harness;
  afterAll(() => api?.close());

  it('refuses edge actions on an edge over its rate, not on another edge', async () => {
    api = await startApi('limitsedge', undefined, undefined, {
      limits: { ...LIMITS, userRate: UNLIMITED, edgeRate: { perSecond: 1, burst: 3 } },
    });
    const alice = await token(ALICE);
    const bob = await token(BOB);
    const poll = (who: string, edge: string, access: string) =>
      call(api, 'POST', '/api/v1/edge-agents', {
        token: who,
        body: { edge_id: edge, action: 'poll', access_id: access, session_id: 's'.repeat(32) },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await poll(alice, EDGE, ACCESS.id)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(api.standIns.received('routerEdgeAgent')).toHaveLength(3);
    expect((await poll(bob, BOB_EDGE, BOB_ACCESS.id)).status).toBe(200);
  });
});

describe('concurrent watches', () => {
  let api: Harness;
  afterAll(() => api?.close());

  it('holds a user to its bound of concurrent watches and frees a slot when one answers', async () => {
    api = await startApi('limitswatch', undefined, undefined, {
      limits: { ...LIMITS, userRate: UNLIMITED },
    });
    const pending: (() => void)[] = [];
    // The router stand-in holds every watch until the test lets it answer.
    api.standIns.handlers.routerEdgeAgent = () =>
      new Promise((resolve) =>
        pending.push(() => resolve({ version: 1, status: 'ok', session_id: 's'.repeat(32), revision: 4 })),
      );
    const alice = await token(ALICE);
    const bob = await token(BOB);
    const watch = (who: string, edge: string, access: string) =>
      call(api, 'POST', '/api/v1/edge-agents', {
        token: who,
        body: { edge_id: edge, action: 'watch', access_id: access, session_id: 's'.repeat(32), cursor: '3' },
      });
    const first = watch(alice, EDGE, ACCESS.id);
    const second = watch(alice, EDGE, ACCESS.id);
    await until(() => pending.length === 2);
    const third = await watch(alice, EDGE, ACCESS.id);
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Bob's watch is his own.
    const bobs = watch(bob, BOB_EDGE, BOB_ACCESS.id);
    await until(() => pending.length === 3);
    for (const answer of pending.splice(0)) answer();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect((await bobs).status).toBe(200);
    // Answered watches gave their slots back.
    const again = watch(alice, EDGE, ACCESS.id);
    await until(() => pending.length === 1);
    pending.splice(0)[0]!();
    expect((await again).status).toBe(200);
  });
});

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('Timed out.');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
