import { ALICE, EDGE, call, token, apiSuite, expectError } from '../../support/api.js';

const PATH = '/api/v1/edge-agents/connectors';

describe('connectors', () => {
  const suite = apiSuite('apiconnectors');

  it('lists the actor’s connectors with their presence', async () => {
    const response = await call(suite.api, 'GET', PATH, { token: suite.alice });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      code: 200,
      message: 'success',
      data: [
        { id: EDGE, name: 'laptop', online: true, device: 'alice-mbp' },
        { id: '1002', name: 'server', online: false },
      ],
    });
    expect(suite.api.standIns.received('historyConnectorList')).toEqual([{ actor_id: ALICE, limit: 100 }]);
    expect(suite.api.standIns.received('routerPresence')).toEqual([{ edge_ids: [EDGE, '1002'] }]);
  });

  it('caps the list at 100', async () => {
    suite.api.standIns.handlers.historyConnectorList = () => ({
      connectors: Array.from({ length: 150 }, (_, i) => ({ id: String(5000 + i), name: `c${i}` })),
    });
    const response = await call(suite.api, 'GET', PATH, { token: suite.alice });
    expect(response.body['data']).toHaveLength(100);
    expect((suite.api.standIns.received('routerPresence')[0]?.['edge_ids'] as string[]).length).toBe(100);
  });

  it('pages the list: `limit` and `cursor` in, `next_cursor` beside the unchanged `data`', async () => {
    suite.api.standIns.handlers.historyConnectorList = (payload) =>
      payload['after'] === undefined
        ? { connectors: [{ id: EDGE, name: 'laptop' }], next_after: EDGE }
        : { connectors: [{ id: '1002', name: 'server' }] };
    const first = await call(suite.api, 'GET', `${PATH}?limit=1`, { token: suite.alice });
    expect(first.body).toEqual({
      code: 200,
      message: 'success',
      data: [{ id: EDGE, name: 'laptop', online: true }],
      next_cursor: EDGE,
    });
    const second = await call(suite.api, 'GET', `${PATH}?limit=1&cursor=${EDGE}`, { token: suite.alice });
    expect(second.body).toEqual({
      code: 200,
      message: 'success',
      data: [{ id: '1002', name: 'server', online: false }],
    });
    expect(suite.api.standIns.received('historyConnectorList')).toEqual([
      { actor_id: ALICE, limit: 1 },
      { actor_id: ALICE, limit: 1, after: EDGE },
    ]);
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'cursor=0', 'cursor=abc']) {
      const refused = await call(suite.api, 'GET', `${PATH}?${query}`, { token: suite.alice });
      expect(refused.status).toBe(400);
    }
    expect(suite.api.standIns.received('historyConnectorList')).toHaveLength(2);
  });

  it('deletes the caller’s connector, and answers 404 for anyone else’s or a malformed id', async () => {
    for (const [who, id] of [
      [suite.bob, EDGE],
      [suite.alice, '1002'],
      [suite.alice, '0'],
      [suite.alice, 'not-an-id'],
    ] as const) {
      const refused = await call(suite.api, 'DELETE', `${PATH}/${id}`, { token: who });
      expectError(refused, 404, 'connector not found');
    }
    const deleted = await call(suite.api, 'DELETE', `${PATH}/${EDGE}`, { token: suite.alice });
    expect(deleted.status).toBe(200);
    expect(deleted.body['data']).toEqual({ id: EDGE, name: 'laptop' });
    const readOnly = await call(suite.api, 'DELETE', `${PATH}/${EDGE}`, {
      token: await token(ALICE, { permissions: ['ai.access.use'] }),
    });
    expect(readOnly.status).toBe(403);
  });

  it('rotates the caller’s connector credentials and returns the new ones', async () => {
    const rotated = await call(suite.api, 'POST', `${PATH}/${EDGE}/credentials`, { token: suite.alice });
    expect(rotated.status).toBe(200);
    expect(rotated.body['data']).toEqual({
      connector: { id: EDGE, name: 'laptop' },
      edge_token: '1.rotated-token',
      nats_creds: 'creds-text',
      env: {
        TETHER_EDGE_ID: EDGE,
        TETHER_EDGE_TOKEN: '1.rotated-token',
        TETHER_NAMESPACE: suite.api.subjects.namespace,
      },
    });
    const foreign = await call(suite.api, 'POST', `${PATH}/1002/credentials`, { token: suite.alice });
    expect(foreign.status).toBe(404);
  });

  it('lists connectors as offline when the router is down', async () => {
    await suite.api.standIns.stop('routerPresence');
    try {
      const response = await call(suite.api, 'GET', PATH, { token: suite.alice });
      expect(response.status).toBe(200);
      expect((response.body['data'] as { online: boolean }[]).map((c) => c.online)).toEqual([false, false]);
    } finally {
      await suite.api.standIns.serve('routerPresence');
    }
  });

  it('requires connectors:update, then ai.access.use, to list', async () => {
    for (const permissions of [['ai.access.use'], ['connectors:update']]) {
      const response = await call(suite.api, 'GET', PATH, { token: await token(ALICE, { permissions }) });
      expectError(response, 403, 'forbidden');
    }
    expect(suite.api.standIns.received('historyConnectorList')).toHaveLength(0);
  });

  it('enrolls a connector and returns what an edge needs to start', async () => {
    const response = await call(suite.api, 'POST', PATH, {
      token: suite.alice,
      body: { name: 'workstation', device: 'ws-1' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      code: 200,
      message: 'success',
      data: {
        connector: { id: '1003', name: 'workstation', device: 'ws-1' },
        edge_token: 'edge-token-value',
        env: {
          TETHER_EDGE_ID: '1003',
          TETHER_EDGE_TOKEN: 'edge-token-value',
          TETHER_NAMESPACE: suite.api.subjects.namespace,
        },
      },
    });
    expect(suite.api.standIns.received('historyConnectorEnroll')).toEqual([
      { actor_id: ALICE, name: 'workstation', device: 'ws-1' },
    ]);
  });

  it('refuses an enrollment body with unknown fields or a blank name', async () => {
    for (const body of [{ name: 'x', owner: 'bob' }, { name: ' ' }, {}, { name: 'x', device: '' }]) {
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body });
      expectError(response, 400, 'invalid request');
    }
    expect(suite.api.standIns.received('historyConnectorEnroll')).toHaveLength(0);
  });

  it('requires connectors:update to enroll', async () => {
    const response = await call(suite.api, 'POST', PATH, {
      token: await token(ALICE, { permissions: ['ai.access.use'] }),
      body: { name: 'x' },
    });
    expect(response.status).toBe(403);
  });
});
