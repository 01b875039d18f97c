// The api's memory of positive authorization decisions (apps/api/src/common/authorizer.ts):
// reused within the TTL, never for refusals, and dropped at once by history's grants-changed
// notice, by the api's own access update/delete, and before the check after a watch's wait.
import {
  ACCESS,
  ALICE,
  BOB,
  BOB_EDGE,
  EDGE,
  SESSION,
  call,
  apiSuite,
  expectError,
} from '../../support/api.js';

const PATH = '/api/v1/edge-agents';
/** Longer than any test here takes: whatever is asked again was dropped, not expired. */
const TTL_MS = 2_000;

describe('authorization cache', () => {
  const suite = apiSuite('authcache', { overrides: { authorizeCacheMs: TTL_MS }, notices: true });

  const poll = { edge_id: EDGE, action: 'poll', session_id: SESSION, access_id: ACCESS.id };
  const authorizations = () => suite.api.standIns.received('historyAuthorize').length;

  /** A grants-changed notice as history publishes it, given time to arrive. */
  const grantsChanged = (actorId: string) => suite.notices.changed(actorId);

  beforeEach(async () => {
    // Every test starts with nothing remembered.
    await grantsChanged(ALICE);
    await grantsChanged(BOB);
  });

  it('asks history once for repeated calls of the same actor, connector and access', async () => {
    for (let i = 0; i < 3; i += 1) {
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
      expect(response.status).toBe(200);
    }
    expect(authorizations()).toBe(1);
    expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(3);
    // Another access (none) is another decision.
    const { access_id: _omitted, ...withoutAccess } = poll;
    await call(suite.api, 'POST', PATH, { token: suite.alice, body: withoutAccess });
    expect(authorizations()).toBe(2);
  });

  it('never remembers a refusal', async () => {
    suite.api.standIns.handlers.historyAuthorize = () => ({
      error: { code: 'access_not_found', message: 'no' },
    });
    for (let i = 0; i < 2; i += 1) {
      const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
      expect(response.status).toBe(404);
    }
    expect(authorizations()).toBe(2);
    expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(0);
  });

  it("drops an actor's decisions on history's grants-changed notice", async () => {
    expect((await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll })).status).toBe(200);
    expect(
      (await call(suite.api, 'POST', PATH, { token: suite.bob, body: { ...poll, edge_id: BOB_EDGE } }))
        .status,
    ).toBe(404);
    // The access is deleted in history, which tells the api.
    suite.api.standIns.handlers.historyAuthorize = () => ({
      error: { code: 'access_not_found', message: 'gone' },
    });
    await grantsChanged(ALICE);
    const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
    expectError(response, 404, 'access not found');
    expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(1);
  });

  it("keeps other actors' decisions on a notice about one actor", async () => {
    await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
    await grantsChanged(BOB);
    await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
    expect(authorizations()).toBe(1);
  });

  it('drops them when the actor deletes or updates an access through this api', async () => {
    await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
    const deleted = await call(suite.api, 'DELETE', `/api/v1/agent-accesses/${ACCESS.id}`, {
      token: suite.alice,
    });
    expect(deleted.status).toBe(200);
    await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
    expect(authorizations()).toBe(2);

    const { id: _id, ...input } = ACCESS;
    const updated = await call(suite.api, 'PUT', `/api/v1/agent-accesses/${ACCESS.id}`, {
      token: suite.alice,
      body: { ...input, project: '/elsewhere' },
    });
    expect(updated.status).toBe(200);
    await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
    expect(authorizations()).toBe(3);
  });

  it('asks history again after a watch waited, even with a remembered decision', async () => {
    const watch = { ...poll, action: 'watch', cursor: '3' };
    await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll });
    expect(authorizations()).toBe(1);
    // Revoked while the watch waits, and no notice arrived (yet).
    suite.api.standIns.revokeDuring({ session_id: SESSION, revision: 4 }, 'access_not_found');
    const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: watch });
    expect(response.status).toBe(404);
    // The first check was remembered, the one after the wait was not.
    expect(authorizations()).toBe(2);
  });
});
