// File actions through the api: the feature permission is checked before every chunk, and the
// caller is authorized again after every file RPC, so a revoke mid-transfer stops it and a file's
// bytes never leave once the grant is gone (reference TestAgentFilesRequireAccessOwnershipAndFilePermissions).
import { ACCESS, ALICE, EDGE, SESSION, call, token, apiSuite, expectError } from '../../support/api.js';

const PATH = '/api/v1/edge-agents';
const TRANSFER = 't'.repeat(32);
const WITHOUT_UPLOAD = ['connectors:update', 'ai.access.use', 'files.read'];

describe('POST /api/v1/edge-agents file actions', () => {
  const suite = apiSuite('edgefiles');

  const chunk = (offset: number) => ({
    edge_id: EDGE,
    action: 'file_write',
    access_id: ACCESS.id,
    session_id: SESSION,
    file: { transfer_id: TRANSFER, offset, data: Buffer.from('abcd').toString('base64') },
  });

  it('authorizes again after every file RPC', async () => {
    suite.api.standIns.handlers.routerEdgeAgent = () => ({ version: 1, status: 'ok', file_offset: 4 });
    const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: chunk(0) });
    expect(response.status).toBe(200);
    expect(suite.api.standIns.received('historyAuthorize')).toHaveLength(2);
  });

  it('answers 403 to the next chunk once files.upload is revoked, without calling the edge', async () => {
    suite.api.standIns.handlers.routerEdgeAgent = () => ({ version: 1, status: 'ok', file_offset: 4 });
    expect((await call(suite.api, 'POST', PATH, { token: suite.alice, body: chunk(0) })).status).toBe(200);
    const revoked = await token(ALICE, { permissions: WITHOUT_UPLOAD });
    const response = await call(suite.api, 'POST', PATH, { token: revoked, body: chunk(4) });
    expectError(response, 403, 'forbidden');
    expect(suite.api.standIns.received('routerEdgeAgent')).toHaveLength(1);
  });

  it('withholds the bytes of a read when the access is revoked during the chunk', async () => {
    suite.api.standIns.revokeDuring(
      { file_data: Buffer.from('secret').toString('base64'), file_offset: 6, file_done: true },
      'access_not_found',
    );
    const response = await call(suite.api, 'POST', PATH, {
      token: suite.alice,
      body: {
        edge_id: EDGE,
        action: 'file_read',
        access_id: ACCESS.id,
        session_id: SESSION,
        file: { path: 'a.txt' },
      },
    });
    expect(response.status).toBe(404);
    expect(JSON.stringify(response.body)).not.toContain(Buffer.from('secret').toString('base64'));
  });

  it('answers 404 when the connector is taken away during an upload chunk', async () => {
    suite.api.standIns.revokeDuring({ file_offset: 4 }, 'connector_not_found');
    const response = await call(suite.api, 'POST', PATH, { token: suite.alice, body: chunk(0) });
    expect(response.status).toBe(404);
  });
});
