import { edgeToken, type EdgeHeartbeat } from '#contracts';
import { encodeJson, requestService } from '#messaging';
import { EDGE_SECRET, createSuite, eventually, type Suite } from './router-harness.js';

describe('router edge presence', () => {
  let suite: Suite;

  beforeAll(async () => {
    suite = await createSuite('presence');
    await suite.startRouter();
  });
  afterAll(async () => {
    await suite.cleanup();
  });

  const heartbeat = (edgeId: string, token = edgeToken(EDGE_SECRET, edgeId)): EdgeHeartbeat => ({
    edge_id: edgeId,
    edge_token: token,
    device: 'laptop',
    agent_kinds: ['scripted'],
    installations: [{ id: 'i1', kind: 'scripted' }],
    live_sessions: 0,
    max_sessions: 4,
    sent_at: Date.now(),
  });
  const online = (ids: string[]) =>
    requestService(suite.nc, suite.subjects, 'routerPresence', { edge_ids: ids }, { timeoutMs: 5_000 });

  it('reports an edge online after a valid heartbeat, and others offline', async () => {
    // The forged one first: once 301 shows up, the forged one has been handled too.
    suite.nc.publish(suite.subjects.edgeHeartbeat, encodeJson(heartbeat('302', 'forged')));
    suite.nc.publish(suite.subjects.edgeHeartbeat, encodeJson(heartbeat('301')));
    const reply = await eventually(
      () => online(['301', '302', '303']),
      (value) => value.online.length > 0,
    );
    expect(reply.online).toEqual(['301']);
    const stored = JSON.parse((await suite.redis.get(`${suite.namespace}:edge:301:presence`))!);
    expect(stored).toMatchObject({ device: 'laptop', installations: 1, max_sessions: 4 });
    expect(await suite.redis.pttl(`${suite.namespace}:edge:301:presence`)).toBeGreaterThan(0);
    expect(await suite.redis.exists(`${suite.namespace}:edge:302:presence`)).toBe(0);
  });

  it('keeps an edge online for 2 of its announced intervals, and offline at once when it leaves', async () => {
    suite.nc.publish(suite.subjects.edgeHeartbeat, encodeJson({ ...heartbeat('304'), interval_ms: 400 }));
    await eventually(
      () => online(['304']),
      (value) => value.online.length === 1,
    );
    const key = `${suite.namespace}:edge:304:presence`;
    const ttl = await suite.redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(800);
    expect(JSON.parse((await suite.redis.get(key))!)).toMatchObject({ ttl_ms: 800 });

    suite.nc.publish(suite.subjects.edgeHeartbeat, encodeJson({ ...heartbeat('304'), leaving: true }));
    await eventually(
      () => online(['304']),
      (value) => value.online.length === 0,
    );
    expect(JSON.parse((await suite.redis.get(key))!)).toMatchObject({ leaving: true });
  });

  it('refuses a heartbeat announcing an interval outside the bounds', async () => {
    suite.nc.publish(suite.subjects.edgeHeartbeat, encodeJson({ ...heartbeat('305'), interval_ms: 5 }));
    suite.nc.publish(suite.subjects.edgeHeartbeat, encodeJson(heartbeat('306')));
    await eventually(
      () => online(['306']),
      (value) => value.online.length === 1,
    );
    expect(await suite.redis.exists(`${suite.namespace}:edge:305:presence`)).toBe(0);
  });

  it('answers an empty list for no ids', async () => {
    await expect(online([])).resolves.toEqual({ online: [] });
  });
});
