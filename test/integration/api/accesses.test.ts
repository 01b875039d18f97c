import { ACCESS, ALICE, EDGE, call, token, apiSuite, expectError } from '../../support/api.js';

const PATH = '/api/v1/agent-accesses';
const input = {
  name: 'Main project',
  kind: 'codex',
  edge_id: EDGE,
  installation_id: ACCESS.installation_id,
  project: ACCESS.project,
};

describe('AgentAccess CRUD', () => {
  const suite = apiSuite('apiaccess');

  it('requires ai.access.use (connectors:update is not enough)', async () => {
    const withoutUse = await token(ALICE, { permissions: ['connectors:update'] });
    for (const [method, path, body] of [
      ['GET', PATH, undefined],
      ['POST', PATH, input],
      ['PUT', `${PATH}/${ACCESS.id}`, input],
      ['DELETE', `${PATH}/${ACCESS.id}`, undefined],
    ] as const) {
      const response = await call(suite.api, method, path, { token: withoutUse, body });
      expectError(response, 403, 'forbidden');
    }
    const onlyUse = await token(ALICE, { permissions: ['ai.access.use'] });
    expect((await call(suite.api, 'GET', PATH, { token: onlyUse })).status).toBe(200);
  });

  describe('list paging', () => {
    it('defaults to page 1 of 20', async () => {
      const response = await call(suite.api, 'GET', PATH, { token: suite.alice });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        code: 200,
        message: 'success',
        data: { items: [ACCESS], total: 1, page: 1, page_size: 20 },
      });
      expect(suite.api.standIns.received('historyAccessList')).toEqual([
        { actor_id: ALICE, page: 1, page_size: 20 },
      ]);
    });

    it('accepts page_size up to 100', async () => {
      const response = await call(suite.api, 'GET', `${PATH}?page=3&page_size=100`, { token: suite.alice });
      expect(response.status).toBe(200);
      expect(suite.api.standIns.received('historyAccessList')).toEqual([
        { actor_id: ALICE, page: 3, page_size: 100 },
      ]);
    });

    it.each([
      'page=0',
      'page=-1',
      'page=abc',
      'page=1.5',
      'page_size=0',
      'page_size=101',
      'page_size=',
      'page=1&page=2',
      'page=99999999999',
    ])('answers 400 invalid page for %s', async (query) => {
      const response = await call(suite.api, 'GET', `${PATH}?${query}`, { token: suite.alice });
      expectError(response, 400, 'invalid page');
      expect(suite.api.standIns.received('historyAccessList')).toHaveLength(0);
    });
  });

  it('creates an access for the actor', async () => {
    const response = await call(suite.api, 'POST', PATH, {
      token: suite.alice,
      body: { ...input, edge_id: Number(EDGE) },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ code: 200, message: 'success', data: { id: 'c'.repeat(32), ...input } });
    expect(suite.api.standIns.received('historyAccessCreate')).toEqual([{ actor_id: ALICE, access: input }]);
  });

  it.each<[string, unknown]>([
    ['an unknown field', { ...input, owner: 'bob' }],
    [
      'a missing field',
      { name: input.name, kind: input.kind, edge_id: EDGE, installation_id: input.installation_id },
    ],
    ['a blank name', { ...input, name: '   ' }],
    ['a name over the bound', { ...input, name: 'n'.repeat(201) }],
    ['an edge_id of 0', { ...input, edge_id: '0' }],
    ['a non-decimal edge_id', { ...input, edge_id: 'abc' }],
    ['a project with a control character', { ...input, project: '/home/a\nb' }],
    ['a project over 4096 bytes', { ...input, project: `/${'p'.repeat(4096)}` }],
    ['an installation_id over 64 bytes', { ...input, installation_id: 'i'.repeat(65) }],
    ['two JSON values', `${JSON.stringify(input)}${JSON.stringify(input)}`],
  ])('refuses a body with %s', async (_name, body) => {
    const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body });
    expectError(response, 400, 'invalid request');
    expect(suite.api.standIns.received('historyAccessCreate')).toHaveLength(0);
  });

  it('refuses a non-JSON content type', async () => {
    const response = await call(suite.api, 'POST', PATH, {
      token: suite.alice,
      body: JSON.stringify(input),
      contentType: 'text/plain',
    });
    expect(response.status).toBe(400);
  });

  it('updates and deletes by id', async () => {
    const updated = await call(suite.api, 'PUT', `${PATH}/${ACCESS.id}`, {
      token: suite.alice,
      body: { ...input, name: 'Renamed' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body['data']).toEqual({ ...input, name: 'Renamed', id: ACCESS.id });
    expect(suite.api.standIns.received('historyAccessUpdate')).toEqual([
      { actor_id: ALICE, id: ACCESS.id, access: { ...input, name: 'Renamed' } },
    ]);
    const deleted = await call(suite.api, 'DELETE', `${PATH}/${ACCESS.id}`, { token: suite.alice });
    expect(deleted.status).toBe(200);
    expect(suite.api.standIns.received('historyAccessDelete')).toEqual([{ actor_id: ALICE, id: ACCESS.id }]);
  });

  it.each(['abc', 'A'.repeat(32), 'a'.repeat(31), 'a'.repeat(33), 'g'.repeat(32)])(
    'answers 404 for the malformed id %s without asking history',
    async (id) => {
      const response = await call(suite.api, 'DELETE', `${PATH}/${id}`, { token: suite.alice });
      expectError(response, 404, 'access not found');
      expect(suite.api.standIns.received('historyAccessDelete')).toHaveLength(0);
    },
  );

  it('answers 404 for an access history does not find for the actor', async () => {
    const response = await call(suite.api, 'PUT', `${PATH}/${'d'.repeat(32)}`, {
      token: suite.alice,
      body: input,
    });
    expectError(response, 404, 'access not found');
  });

  it('maps a history conflict to 409', async () => {
    suite.api.standIns.handlers.historyAccessCreate = () => ({
      error: { code: 'conflict', message: 'duplicate name' },
    });
    const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: input });
    expectError(response, 409, 'conflict');
  });
});
