// While history cannot answer at all, the api's remembered grants stand in for it
// (apps/api/src/common/authorizer.ts, docs/reliability.md "While history is down"): poll, watch
// and send on a session whose grant history gave recently go on; nothing that history refused,
// that a grants-changed notice dropped, or that is older than the outage bound does.
import { ACCESS, ALICE, BOB_EDGE, EDGE, SESSION, call, apiSuite } from '../../support/api.js';
import { sleep } from '#test-support';

const PATH = '/api/v1/edge-agents';
/** Short, so a test can outlive it: what happens next is the outage path, not the cache. */
const CACHE_MS = 50;
const OUTAGE_MS = 1_500;

describe('authorization while history is down', () => {
  const suite = apiSuite('authoutage', {
    overrides: { authorizeCacheMs: CACHE_MS, authorizeOutageMs: OUTAGE_MS },
    notices: true,
  });

  const poll = { edge_id: EDGE, action: 'poll', session_id: SESSION, access_id: ACCESS.id };
  const unavailable = () => ({ error: { code: 'unavailable', message: 'database unreachable' } });

  beforeEach(async () => {
    await suite.notices.changed(ALICE);
  });

  /** Alice is granted once while history answers; then history stops answering in `how`. */
  async function grantedThenOutage(how: 'no_responders' | 'unavailable'): Promise<void> {
    expect((await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll })).status).toBe(200);
    if (how === 'no_responders') await suite.api.standIns.stop('historyAuthorize');
    else suite.api.standIns.handlers.historyAuthorize = unavailable;
    await sleep(CACHE_MS * 2);
  }

  it('serves poll, watch and send from a remembered grant while history has no responder', async () => {
    await grantedThenOutage('no_responders');
    try {
      for (const body of [
        poll,
        { ...poll, action: 'watch', cursor: '3' },
        { ...poll, action: 'send', text: 'while history is away' },
      ]) {
        const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body });
        expect({ action: body.action, status: response.status }).toEqual({
          action: body.action,
          status: 200,
        });
      }
      expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(4);
    } finally {
      await suite.api.standIns.serve('historyAuthorize');
    }
  });

  it('serves from a remembered grant while history answers unavailable (its database is down)', async () => {
    await grantedThenOutage('unavailable');
    expect((await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll })).status).toBe(200);
    // Once history answers again, its answer counts: here, a refusal.
    suite.api.standIns.handlers.historyAuthorize = () => ({
      error: { code: 'access_not_found', message: 'gone' },
    });
    expect((await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll })).status).toBe(404);
    // The refusal dropped the grant: a new outage finds nothing to stand in.
    suite.api.standIns.handlers.historyAuthorize = unavailable;
    expect((await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll })).status).toBe(503);
  });

  it('answers 503 to a caller history never granted', async () => {
    await grantedThenOutage('unavailable');
    const response = await call(suite.api, 'POST', PATH, {
      token: suite.bob,
      body: { ...poll, edge_id: BOB_EDGE },
    });
    expect(response.status).toBe(503);
    // Alice's grant is for her access on her edge only.
    const other = await call(suite.api, 'POST', PATH, {
      token: suite.alice,
      body: { ...poll, edge_id: BOB_EDGE },
    });
    expect(other.status).toBe(503);
  });

  it('stands in for nothing after a grants-changed notice', async () => {
    await grantedThenOutage('unavailable');
    await suite.notices.changed(ALICE);
    expect((await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll })).status).toBe(503);
    expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(1);
  });

  it('stands in for at most the outage bound after history last granted', async () => {
    await grantedThenOutage('unavailable');
    expect((await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll })).status).toBe(200);
    await sleep(OUTAGE_MS);
    expect((await call(suite.api, 'POST', PATH, { token: suite.alice, body: poll })).status).toBe(503);
  });
});
