import { call, apiSuite, expectError } from '../../support/api.js';

describe('api HTTP behaviour common to every route', () => {
  const suite = apiSuite('apihttp');

  it.each([
    ['GET', '/api/v1/edge-agents', 'POST'],
    ['PUT', '/api/v1/edge-agents', 'POST'],
    ['DELETE', '/api/v1/edge-agents/connectors', 'GET, HEAD, POST'],
    ['PATCH', '/api/v1/agent-accesses', 'GET, HEAD, POST'],
    ['GET', `/api/v1/agent-accesses/${'a'.repeat(32)}`, 'PUT, DELETE'],
    ['POST', '/api/v1/agent-accesses/anything?x=1', 'PUT, DELETE'],
  ])('answers %s %s with 405 and Allow: %s, before authentication', async (method, path, allow) => {
    const response = await call(suite.api, method, path);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body).toEqual({ code: 405, message: 'method not allowed' });
  });

  it.each([
    '/index.html',
    '/api/v1',
    '/api/v1/edge-agents/',
    '/api/v1/edge-agents/x/y',
    '/api/v2/edge-agents',
  ])('answers 404 for the unknown path %s', async (path) => {
    const response = await call(suite.api, 'GET', path, { token: suite.alice });
    expectError(response, 404, 'not found');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('marks success and error responses no-store', async () => {
    const success = await call(suite.api, 'GET', '/api/v1/agent-accesses', { token: suite.alice });
    expect(success.status).toBe(200);
    expect(success.headers.get('cache-control')).toBe('no-store');
    const unauthorized = await call(suite.api, 'GET', '/api/v1/agent-accesses');
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('cache-control')).toBe('no-store');
  });

  it('answers an unexpected failure with 500 and an error id, nothing else', async () => {
    suite.api.standIns.handlers.historyAccessList = () => ({
      error: { code: 'internal', message: 'db password is hunter2' },
    });
    const response = await call(suite.api, 'GET', '/api/v1/agent-accesses', { token: suite.alice });
    expect(response.status).toBe(500);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(response.body).sort()).toEqual(['code', 'error_id', 'message']);
    expect(response.body).toMatchObject({ code: 500, message: 'internal error' });
    expect(response.body['error_id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 503 agent unavailable when history is down on a non-edge route', async () => {
    await suite.api.standIns.stop('historyAccessList');
    try {
      const response = await call(suite.api, 'GET', '/api/v1/agent-accesses', { token: suite.alice });
      expectError(response, 503, 'agent unavailable');
    } finally {
      await suite.api.standIns.serve('historyAccessList');
    }
  });

  it('answers a malformed Content-Type header with 400', async () => {
    const response = await call(suite.api, 'POST', '/api/v1/agent-accesses', {
      token: suite.alice,
      body: '{}',
      contentType: 'application/json; charset',
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});
