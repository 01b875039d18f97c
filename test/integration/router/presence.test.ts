import { headers } from '@nats-io/transport-node';
import { EDGE_BOOT_ID_HEADER, edgeToken, type EdgeHeartbeat } from '#contracts';
import { encodeJson, requestService } from '#messaging';
import { createSuite, ROUTER_POLL, type Suite } from '../../support/router.js';
import { TEST_EDGE_SECRET, pollUntil } from '#test-support';

describe('router edge presence', () => {
  let suite: Suite;

  beforeAll(async () => {
    suite = await createSuite('presence');
    await suite.startRouter();
  });
  afterAll(async () => {
    await suite.cleanup();
  });

  const heartbeat = (edgeId: string, token = edgeToken(TEST_EDGE_SECRET, edgeId)): EdgeHeartbeat => ({
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
    suite.nc.publish(suite.subjects.edgeHeartbeatOf('302'), encodeJson(heartbeat('302', 'forged')));
    // Another edge's id on this edge's subject: refused whatever the token.
    suite.nc.publish(suite.subjects.edgeHeartbeatOf('304'), encodeJson(heartbeat('303')));
    suite.nc.publish(suite.subjects.edgeHeartbeatOf('301'), encodeJson(heartbeat('301')));
    const reply = await pollUntil(
      () => online(['301', '302', '303']),
      (value) => value.online.length > 0,
      ROUTER_POLL,
    );
    expect(reply.online).toEqual(['301']);
    const stored = JSON.parse((await suite.redis.get(`${suite.namespace}:edge:301:presence`))!);
    expect(stored).toMatchObject({ device: 'laptop', installations: 1, max_sessions: 4 });
    expect(await suite.redis.pttl(`${suite.namespace}:edge:301:presence`)).toBeGreaterThan(0);
    expect(await suite.redis.exists(`${suite.namespace}:edge:302:presence`)).toBe(0);
  });

  it('keeps an edge online for 2 of its announced intervals, and offline at once when it leaves', async () => {
    suite.nc.publish(
      suite.subjects.edgeHeartbeatOf('307'),
      encodeJson({ ...heartbeat('307'), interval_ms: 400 }),
    );
    await pollUntil(
      () => online(['307']),
      (value) => value.online.length === 1,
      ROUTER_POLL,
    );
    const key = `${suite.namespace}:edge:307:presence`;
    const ttl = await suite.redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(800);
    expect(JSON.parse((await suite.redis.get(key))!)).toMatchObject({ ttl_ms: 800 });

    suite.nc.publish(
      suite.subjects.edgeHeartbeatOf('307'),
      encodeJson({ ...heartbeat('307'), leaving: true }),
    );
    await pollUntil(
      () => online(['307']),
      (value) => value.online.length === 0,
      ROUTER_POLL,
    );
    expect(JSON.parse((await suite.redis.get(key))!)).toMatchObject({ leaving: true });
  });

  it('refuses a heartbeat announcing an interval outside the bounds', async () => {
    suite.nc.publish(
      suite.subjects.edgeHeartbeatOf('308'),
      encodeJson({ ...heartbeat('308'), interval_ms: 5 }),
    );
    suite.nc.publish(suite.subjects.edgeHeartbeatOf('309'), encodeJson(heartbeat('309')));
    await pollUntil(
      () => online(['309']),
      (value) => value.online.length === 1,
      ROUTER_POLL,
    );
    expect(await suite.redis.exists(`${suite.namespace}:edge:308:presence`)).toBe(0);
  });

  it('marks a restart when a heartbeat’s boot id header differs from the record it replaces', async () => {
    const publish = (bootId: string) => {
      const boot = headers();
      boot.set(EDGE_BOOT_ID_HEADER, bootId);
      suite.nc.publish(suite.subjects.edgeHeartbeatOf('311'), encodeJson(heartbeat('311')), {
        headers: boot,
      });
    };
    const presence = () => suite.redis.get(`${suite.namespace}:edge:311:presence`);
    const restarted = () => suite.redis.get(`${suite.namespace}:edge:311:restarted`);
    publish('aaaa0000-0000');
    expect(await pollUntil(presence, (value) => value !== null, ROUTER_POLL)).toContain('aaaa0000-0000');
    publish('aaaa0000-0000');
    // Not a valid boot id: recorded without one, so it marks nothing either.
    publish('NOT A BOOT ID');
    await pollUntil(presence, (value) => value !== null && !value.includes('boot_id'), ROUTER_POLL);
    expect(await restarted()).toBeNull();

    publish('aaaa0000-0000');
    await pollUntil(presence, (value) => value?.includes('aaaa0000-0000') === true, ROUTER_POLL);
    const before = Date.now();
    publish('bbbb1111-1111');
    const mark = await pollUntil(restarted, (value) => value !== null, ROUTER_POLL);
    expect(Number(mark)).toBeGreaterThanOrEqual(before - 1_000);
    expect(await suite.redis.pttl(`${suite.namespace}:edge:311:restarted`)).toBeGreaterThan(60_000);
  });

  it('answers an empty list for no ids', async () => {
    await expect(online([])).resolves.toEqual({ online: [] });
  });
});
