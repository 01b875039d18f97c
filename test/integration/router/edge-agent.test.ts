import { Limits, result, type EdgeAgentRequest } from '#contracts';
import { encodeJson, requestService } from '#messaging';
import { createSuite, fakeEdge, sessionId, type Suite } from '../../support/router.js';

describe('router edge-agent forwarding', () => {
  let suite: Suite;

  beforeAll(async () => {
    suite = await createSuite('edgeagent');
    await suite.startRouter();
  });
  afterAll(async () => {
    await suite.cleanup();
  });

  const route = (request: EdgeAgentRequest, projectRoot?: string) =>
    requestService(
      suite.nc,
      suite.subjects,
      'routerEdgeAgent',
      { actor_id: 'user-1', request, ...(projectRoot ? { project_root: projectRoot } : {}) },
      { timeoutMs: 10_000 },
    );

  it('forwards the versioned envelope and returns the edge result', async () => {
    const edge = fakeEdge(suite, '201', (rpc) =>
      result('ok', { session_id: rpc.request.session_id, revision: 3 }),
    );
    await edge.ready();
    const sid = sessionId();
    const reply = await route(
      { edge_id: '201', action: 'poll', session_id: sid, access_id: 'a'.repeat(32) },
      '/srv/p',
    );
    expect(reply).toEqual({ version: 1, status: 'ok', session_id: sid, revision: 3 });
    expect(edge.requests).toEqual([
      {
        version: 1,
        actor_id: 'user-1',
        project_root: '/srv/p',
        request: { edge_id: '201', action: 'poll', session_id: sid, access_id: 'a'.repeat(32) },
      },
    ]);
    edge.stop();
  });

  it('maps a status outside the allow-list to unavailable', async () => {
    const edge = fakeEdge(suite, '202', () => ({ version: 1, status: 'exploded' }));
    await edge.ready();
    await expect(route({ edge_id: '202', action: 'discover' })).resolves.toEqual(result('unavailable'));
    edge.stop();
  });

  it('maps another contract version to upgrade_required', async () => {
    const edge = fakeEdge(suite, '203', () => ({ version: 2, status: 'ok' }));
    await edge.ready();
    await expect(route({ edge_id: '203', action: 'discover' })).resolves.toEqual(result('upgrade_required'));
    edge.stop();
  });

  it('answers unavailable when no edge listens', async () => {
    await expect(route({ edge_id: '204', action: 'discover' })).resolves.toEqual(result('unavailable'));
  });

  it('answers unavailable for an oversize or undecodable reply', async () => {
    const big = fakeEdge(suite, '205', () =>
      result('ok', { title: 'x'.repeat(Limits.RPC_PAYLOAD_LIMIT_BYTES) }),
    );
    const garbage = fakeEdge(suite, '206', () => new TextEncoder().encode('{not json'));
    await big.ready();
    await expect(route({ edge_id: '205', action: 'discover' })).resolves.toEqual(result('unavailable'));
    await expect(route({ edge_id: '206', action: 'discover' })).resolves.toEqual(result('unavailable'));
    big.stop();
    garbage.stop();
  });

  it('refuses the internal expire action from a caller and never reaches the edge', async () => {
    const edge = fakeEdge(suite, '207');
    await edge.ready();
    await expect(route({ edge_id: '207', action: 'expire', session_id: sessionId() })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    expect(edge.requests).toHaveLength(0);
    edge.stop();
  });

  describe('sessions with a saved access', () => {
    const accessId = 'b'.repeat(32);
    const stored = ['1'.repeat(32), '2'.repeat(32)];
    let history: { unsubscribe(): void };
    const historyRequests: unknown[] = [];

    beforeAll(async () => {
      history = suite.nc.subscribe(suite.subjects.requests.historySessions, {
        callback: (_error, msg) => {
          historyRequests.push(JSON.parse(new TextDecoder().decode(msg.data)));
          msg.respond(
            encodeJson({ sessions: stored.map((id) => ({ session_id: id, title: `t${id[0]}` })), total: 7 }),
          );
        },
      });
      await suite.nc.flush();
    });
    afterAll(() => history.unsubscribe());

    it('lays live state over stored rows and appends live sessions on page 1', async () => {
      const live = '3'.repeat(32);
      const edge = fakeEdge(suite, '208', () =>
        result('ok', {
          sessions: [
            { session_id: stored[1]!, running: true, status: 'ok' },
            { session_id: live, title: 'new' },
          ],
        }),
      );
      await edge.ready();
      const reply = await route({ edge_id: '208', action: 'sessions', access_id: accessId });
      expect(reply.status).toBe('ok');
      expect(reply.history_total).toBe(7);
      expect(reply.history_persistent).toBe(true);
      expect(reply.sessions).toEqual([
        { session_id: stored[0], title: 't1', running: false, closed: true, status: 'session_closed' },
        { session_id: stored[1], title: 't2', running: true, closed: true, status: 'ok' },
        { session_id: live, title: 'new' },
      ]);
      expect(historyRequests.at(-1)).toEqual({
        actor_id: 'user-1',
        access_id: accessId,
        edge_id: '208',
        page: 1,
      });
      edge.stop();
    });

    it('still lists stored history when the edge is offline', async () => {
      const reply = await route({
        edge_id: '209',
        action: 'sessions',
        access_id: accessId,
        history_page: '2',
      });
      expect(reply.status).toBe('ok');
      expect(reply.sessions?.map((session) => session.session_id)).toEqual(stored);
      expect(historyRequests.at(-1)).toMatchObject({ page: 2 });
    });
  });
});
