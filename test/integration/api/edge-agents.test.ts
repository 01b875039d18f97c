import {
  ACCESS,
  ALICE,
  BOB_ACCESS,
  BOB_EDGE,
  EDGE,
  SESSION,
  call,
  token,
  apiSuite,
  expectError,
} from '../../support/api.js';

const PATH = '/api/v1/edge-agents';

describe('POST /api/v1/edge-agents', () => {
  const suite = apiSuite('edgeagents');

  const poll = { edge_id: EDGE, action: 'poll', session_id: SESSION };

  describe('authentication and permissions', () => {
    it('answers 401 without a token, with a bad signature, expired, or without sub', async () => {
      const cases = [
        undefined,
        await token(ALICE, { secret: 'another-secret-that-is-long-enough' }),
        await token(ALICE, { expiresIn: -120 }),
        await token(undefined),
        await token('x'.repeat(33)),
        'not.a.jwt',
      ];
      for (const bearer of cases) {
        const response = await call(suite.api, 'POST', PATH, { token: bearer, body: poll });
        expectError(response, 401, 'unauthorized');
        expect(response.headers.get('cache-control')).toBe('no-store');
      }
      expect(suite.api.standIns.received('historyAuthorize')).toHaveLength(0);
    });

    it('answers 403 without connectors:update, then without ai.access.use', async () => {
      for (const permissions of [['ai.access.use'], ['connectors:update'], [], 'connectors:update']) {
        const response = await call(suite.api, 'POST', PATH, {
          token: await token(ALICE, { permissions }),
          body: poll,
        });
        expectError(response, 403, 'forbidden');
      }
      expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(0);
    });

    it('checks authentication before the body', async () => {
      const response = await call(suite.api, 'POST', PATH, { body: 'x'.repeat(300 * 1024) });
      expect(response.status).toBe(401);
    });

    it('needs files.read or files.upload for file actions', async () => {
      const fileList = {
        edge_id: EDGE,
        action: 'file_list',
        access_id: ACCESS.id,
        session_id: SESSION,
        file: { path: 'src' },
      };
      const withoutRead = await token(ALICE, {
        permissions: ['connectors:update', 'ai.access.use', 'files.upload'],
      });
      expect((await call(suite.api, 'POST', PATH, { token: withoutRead, body: fileList })).status).toBe(403);
      expect((await call(suite.api, 'POST', PATH, { token: suite.alice, body: fileList })).status).toBe(200);
    });
  });

  describe('body validation', () => {
    const invalid = { code: 400, message: 'invalid agent request' };
    const cases: [string, string | object][] = [
      ['an unknown top-level field', { ...poll, extra: 1 }],
      [
        'an unknown nested field',
        {
          edge_id: EDGE,
          action: 'file_list',
          access_id: ACCESS.id,
          session_id: SESSION,
          file: { path: 'a', mode: 1 },
        },
      ],
      ['a client-sent actor_id', { ...poll, actor_id: 'mallory' }],
      ['a client-sent project_root', { ...poll, project_root: '/' }],
      [
        'a client-sent resume',
        {
          edge_id: EDGE,
          action: 'resume',
          access_id: ACCESS.id,
          session_id: SESSION,
          resume: { session_id: SESSION, revision: 1 },
        },
      ],
      [
        'a client-sent reset_revision',
        { edge_id: EDGE, action: 'send', session_id: SESSION, text: 'hi', reset_revision: 2 },
      ],
      ['two JSON values', `${JSON.stringify(poll)} ${JSON.stringify(poll)}`],
      ['trailing garbage', `${JSON.stringify(poll)}x`],
      ['malformed JSON', '{"edge_id":'],
      ['a JSON array', [poll]],
      ['an invalid action', { ...poll, action: 'format_disk' }],
      ['the internal snapshot action', { ...poll, action: 'snapshot' }],
      ['the internal expire action', { ...poll, action: 'expire' }],
      ['edge_id 0', { ...poll, edge_id: '0' }],
      ['a §2.2 rule: cursor outside watch', { ...poll, cursor: '3' }],
      ['a §2.2 rule: session_id of the wrong length', { ...poll, session_id: 'short' }],
      [
        'a §2.2 rule: danger-full-access',
        { edge_id: EDGE, action: 'permissions', session_id: SESSION, permission_mode: 'danger-full-access' },
      ],
    ];
    it.each(cases)('refuses %s', async (_name, body) => {
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(invalid);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(suite.api.standIns.received('historyAuthorize')).toHaveLength(0);
      expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(0);
    });

    it('refuses a 300 KiB body', async () => {
      const body = { ...poll, text: 'x'.repeat(300 * 1024) };
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(invalid);
    });

    it('refuses a non-JSON content type and a missing body', async () => {
      const asText = await call(suite.api, 'POST', PATH, {
        token: suite.alice,
        body: JSON.stringify(poll),
        contentType: 'text/plain',
      });
      expect(asText.status).toBe(400);
      const empty = await call(suite.api, 'POST', PATH, { token: suite.alice });
      expect(empty.status).toBe(400);
      expect(empty.body).toEqual(invalid);
    });
  });

  describe('authorization', () => {
    it('answers 404 for a foreign connector and never calls the router', async () => {
      const response = await call(suite.api, 'POST', PATH, {
        token: suite.alice,
        body: { ...poll, edge_id: BOB_EDGE },
      });
      expectError(response, 404, 'connector not found');
      expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(0);
    });

    it('answers 404 for a foreign access and never calls the router', async () => {
      const sessions = { edge_id: EDGE, action: 'sessions', access_id: BOB_ACCESS.id };
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: sessions });
      expectError(response, 404, 'access not found');
      expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(0);
    });

    it('answers 404 when a start does not match the saved access', async () => {
      const start = {
        edge_id: EDGE,
        action: 'start',
        access_id: ACCESS.id,
        installation_id: ACCESS.installation_id,
        project: '/etc',
      };
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: start });
      expectError(response, 404, 'access not found');
      expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(0);
    });

    it('injects actor_id from the token and project_root from the access', async () => {
      const start = {
        edge_id: Number(EDGE),
        action: 'start',
        access_id: ACCESS.id,
        installation_id: ACCESS.installation_id,
        project: ACCESS.project,
      };
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: start });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        code: 200,
        message: 'success',
        data: { version: 1, status: 'ok' },
      });
      expect(suite.api.standIns.received('historyAuthorize')).toEqual([
        { actor_id: ALICE, edge_id: EDGE, access_id: ACCESS.id },
      ]);
      const [forwarded] = suite.api.standIns.received('routerEdgeAgent');
      expect(forwarded).toEqual({
        actor_id: ALICE,
        project_root: ACCESS.project,
        request: { ...start, edge_id: EDGE },
      });
    });

    it('sends no project_root without an access', async () => {
      await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
      const [forwarded] = suite.api.standIns.received('routerEdgeAgent');
      expect(forwarded).toEqual({ actor_id: ALICE, request: poll });
    });
  });

  describe('replies', () => {
    it('passes edge statuses through as HTTP 200', async () => {
      suite.api.standIns.handlers.routerEdgeAgent = () => ({ version: 1, status: 'busy' });
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ code: 200, message: 'success', data: { version: 1, status: 'busy' } });
    });

    it('turns a status outside the allow-list into unavailable', async () => {
      suite.api.standIns.handlers.routerEdgeAgent = () => ({ version: 1, status: 'exploded', secret: 'x' });
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
      expect(response.body['data']).toEqual({ version: 1, status: 'unavailable' });
    });

    it('answers status unavailable when the router is down', async () => {
      await suite.api.standIns.stop('routerEdgeAgent');
      try {
        const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          code: 200,
          message: 'success',
          data: { version: 1, status: 'unavailable' },
        });
      } finally {
        await suite.api.standIns.serve('routerEdgeAgent');
      }
    });

    it('answers 503 when history cannot authorize', async () => {
      await suite.api.standIns.stop('historyAuthorize');
      try {
        const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
        expectError(response, 503, 'agent unavailable');
        expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(0);
      } finally {
        await suite.api.standIns.serve('historyAuthorize');
      }
    });

    it('adds request_service_ms to send only', async () => {
      const send = { edge_id: EDGE, action: 'send', session_id: SESSION, text: 'hello' };
      const sent = await call(suite.api, 'POST', PATH, { token: suite.alice, body: send });
      expect(sent.status).toBe(200);
      expect(typeof (sent.body['data'] as Record<string, unknown>)['request_service_ms']).toBe('number');
      const polled = await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
      expect(polled.body['data']).not.toHaveProperty('request_service_ms');
    });
  });

  describe('watch', () => {
    const watch = { edge_id: EDGE, action: 'watch', access_id: ACCESS.id, session_id: SESSION, cursor: '3' };

    it('authorizes again after the reply', async () => {
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: watch });
      expect(response.status).toBe(200);
      expect(suite.api.standIns.received('historyAuthorize')).toHaveLength(2);
      // Other actions authorize once.
      await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
      expect(suite.api.standIns.received('historyAuthorize')).toHaveLength(3);
    });

    it('answers 404 instead of data when the access is revoked during the wait', async () => {
      // The owner deletes the access while the watch waits.
      suite.api.standIns.revokeDuring(
        { session_id: SESSION, revision: 4, messages: [{ role: 'assistant', text: 'secret' }] },
        'access_not_found',
      );
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: watch });
      expectError(response, 404, 'access not found');
    });

    it('answers 404 when the connector is taken away during the wait', async () => {
      suite.api.standIns.revokeDuring({ session_id: SESSION, revision: 4 }, 'connector_not_found');
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: watch });
      expectError(response, 404, 'connector not found');
    });
  });
});
