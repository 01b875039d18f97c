// Router lease cases of the reference's §7 list that test/integration/router/leases.test.ts does
// not pin: TestHistorySnapshotDoesNotRenewIdleLease (the reads that keep history current never
// renew a lease) and TestNativeBindingSurvivesBridgeRestart's "a 48-hour-old started_at does not
// cause expiry" (a resume starts a fresh runtime age). Real router and Redis; raw NATS responders
// stand in for the edge and for history's resume seed.
import { Limits, result, type EdgeAgentRequest, type ResumeState } from '#contracts';
import { encodeJson, requestService } from '#messaging';
import { createSuite, fakeEdge, sessionId, sessionUpdate, type Suite } from '../../support/router.js';

const EDGE = '701';
const ACCESS = 'a'.repeat(32);
const OWNER = 'user-1';
const HOUR = 3_600_000;

describe('reference lease cases at the router', () => {
  let suite: Suite;
  let edge: ReturnType<typeof fakeEdge>;
  let seeds: ReturnType<Suite['nc']['subscribe']>;

  beforeAll(async () => {
    suite = await createSuite('refleases');
    // The edge answers every action for the session it is asked about, idle and open.
    edge = fakeEdge(suite, EDGE, (rpc) =>
      result('ok', {
        session_id: rpc.request.session_id,
        revision: (rpc.resume?.revision ?? 4) + 1,
        history_windowing: true,
      }),
    );
    // History's resume seed: a conversation started two days ago.
    seeds = suite.nc.subscribe(suite.subjects.requests.historyResumeSeed, {
      callback: (_error, msg) => {
        const scope = JSON.parse(new TextDecoder().decode(msg.data)) as { session_id: string };
        const resume: ResumeState = {
          session_id: scope.session_id,
          revision: 4,
          started_at: new Date(Date.now() - 48 * HOUR).toISOString(),
          messages: [{ role: 'user', text: 'old question' }],
        };
        msg.respond(encodeJson({ state: 'stored', resume }));
      },
    });
    await edge.ready();
    // The reaper's first pass comes after these checks: they read lease times, not expiries.
    await suite.startRouter({ TETHER_LEASE_REAPER_INTERVAL_MS: '60000' });
  });
  afterAll(async () => {
    seeds.unsubscribe();
    edge.stop();
    await suite.cleanup();
  });

  /** The lease index shard the router files the session under. */
  const leasesKey = (sid: string) => suite.redisKeys.leases(suite.redisKeys.leaseShard(sid));
  const leaseKey = (sid: string) => `${suite.namespace}:{${sid}}:lease`;
  const route = (request: Omit<EdgeAgentRequest, 'edge_id'>) =>
    requestService(
      suite.nc,
      suite.subjects,
      'routerEdgeAgent',
      { actor_id: OWNER, request: { edge_id: EDGE, access_id: ACCESS, ...request }, project_root: '/p' },
      { timeoutMs: 10_000 },
    );
  /** A saved session's lease as a user action left it `idleMs` ago, created `ageMs` ago. */
  const seedLease = async (sid: string, idleMs: number, ageMs: number) => {
    const now = Date.now();
    await suite.redis.hset(leaseKey(sid), {
      created: now - ageMs,
      touched: now - idleMs,
      saved: '1',
      edge: EDGE,
      owner: OWNER,
      access: ACCESS,
      attempts: '0',
    });
    const due = Math.min(
      now - idleMs + Limits.SAVED_SESSION_IDLE_MS,
      now - ageMs + Limits.SAVED_SESSION_MAX_AGE_MS,
    );
    await suite.redis.zadd(leasesKey(sid), due, sid);
    return due;
  };
  const lease = async (sid: string) => ({
    due: Number(await suite.redis.zscore(leasesKey(sid), sid)),
    hash: await suite.redis.hgetall(leaseKey(sid)),
  });

  it('never renews a lease for the edge state streamed to history, nor for a snapshot a caller asks for', async () => {
    const sid = sessionId();
    const due = await seedLease(sid, 20 * 60_000, HOUR);
    const before = await lease(sid);
    // The edge keeps history current by streaming updates (the reference's background sync).
    for (let revision = 1; revision <= 3; revision += 1) {
      await requestService(
        suite.nc,
        suite.subjects,
        'routerSessionUpdate',
        sessionUpdate({ session_id: sid, revision, edge_id: EDGE, actor_id: OWNER, access_id: ACCESS }),
        { timeoutMs: 10_000 },
      );
    }
    // `snapshot` is internal: a caller cannot send it, so it cannot renew anything either.
    await expect(route({ action: 'snapshot' as 'poll', session_id: sid })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    const after = await lease(sid);
    expect(after).toEqual(before);
    expect(after.due).toBe(due);
    expect(edge.requests.filter((rpc) => rpc.request.session_id === sid)).toEqual([]);
    // A user action does renew it.
    await route({ action: 'poll', session_id: sid });
    expect((await lease(sid)).due).toBeGreaterThan(due);
  });

  it('starts a fresh runtime age on resume, so a 48-hour-old conversation is not due', async () => {
    const sid = sessionId();
    // Idle 10 min, but its runtime is 25 h old: due already by age.
    const due = await seedLease(sid, 10 * 60_000, 25 * HOUR);
    expect(due).toBeLessThan(Date.now());
    const resumed = await route({ action: 'resume', session_id: sid });
    expect(resumed).toMatchObject({ status: 'ok', session_id: sid, revision: 5 });
    const forwarded = edge.requests.find((rpc) => rpc.request.session_id === sid);
    expect(forwarded?.resume?.started_at).toBeDefined();
    const after = await lease(sid);
    const now = Date.now();
    expect(Number(after.hash['created'])).toBeGreaterThan(now - 60_000);
    // Due after the idle limit of a saved session again, not after the seed's age.
    expect(after.due).toBeGreaterThan(now + Limits.SAVED_SESSION_IDLE_MS - 60_000);
    expect(after.due).toBeLessThanOrEqual(now + Limits.SAVED_SESSION_IDLE_MS);
  });

  it('keeps the runtime age on ordinary actions', async () => {
    const sid = sessionId();
    await seedLease(sid, 10 * 60_000, 23.9 * HOUR);
    const created = Number((await lease(sid)).hash['created']);
    await route({ action: 'poll', session_id: sid });
    const after = await lease(sid);
    expect(Number(after.hash['created'])).toBe(created);
    // The 24 h age cap, not the 30 min idle limit, decides.
    expect(after.due).toBe(created + Limits.SAVED_SESSION_MAX_AGE_MS);
  });
});
