// Edges as managed objects, on a real stack whose NATS runs in operator mode (issue 11):
// enrollment returns each edge its own NATS user; rotating or deleting one connector revokes
// that edge's token and NATS user (its connection is dropped within seconds) and leaves every
// other edge working; another user's DELETE is 404.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { inboxPrefix, result, type SessionUpdate } from '#contracts';
import { encodeJson } from '#messaging';
import { signToken, type ApiClient, TEST_JWT_SECRET } from '#test-support';
import { startE2eStack, useOperatorNats, type E2eStack } from '../support/e2e-stack.js';
import { connectAs, within, type WatchedConnection } from '../support/nats-permissions.js';

jest.setTimeout(120_000);
useOperatorNats(14220);

const OWNER = `alice${randomBytes(3).toString('hex')}`;
/** A revoked user's connection is dropped as soon as the server has the new account JWT. */
const REVOKED_WITHIN_MS = 10_000;

interface Enrollment {
  connector: { id: string };
  edge_token: string;
  nats_creds?: string;
}

let e2e: E2eStack;
let alice: ApiClient;
let bob: ApiClient;
let credsDir: string;
const connections: WatchedConnection[] = [];

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'edgecreds',
    owner: OWNER,
  });
  alice = e2e.owner;
  bob = alice.withToken(await signToken(TEST_JWT_SECRET, 'bob'));
  credsDir = mkdtempSync(join(tmpdir(), 'tether-edgecreds-'));
});

afterAll(async () => {
  await Promise.allSettled(connections.map((watched) => watched.nc.close()));
  await e2e?.close();
  if (credsDir) rmSync(credsDir, { recursive: true, force: true });
});

async function enroll(name: string): Promise<Enrollment> {
  const reply = await alice.call<Enrollment>('POST', '/api/v1/edge-agents/connectors', { name });
  expect(reply.status).toBe(200);
  expect(reply.body.data?.nats_creds).toMatch(/BEGIN NATS USER JWT/);
  return reply.body.data!;
}

async function connectEdge(enrollment: Enrollment, label: string): Promise<WatchedConnection> {
  const path = join(credsDir, `${label}.creds`);
  writeFileSync(path, enrollment.nats_creds!, { mode: 0o600 });
  const id = enrollment.connector.id;
  const watched = await connectAs(
    e2e.stack.options.natsUrl,
    path,
    inboxPrefix(e2e.stack.subjects, 'edge', id),
    `edge-${label}`,
  );
  connections.push(watched);
  return watched;
}

/** One session update from an edge's connection, as the edge-connector sends it. */
async function update(edge: WatchedConnection, edgeId: string, token: string): Promise<unknown> {
  const sessionId = randomBytes(16).toString('hex');
  const payload: SessionUpdate = {
    edge_id: edgeId,
    edge_token: token,
    actor_id: OWNER,
    session_id: sessionId,
    revision: 1,
    emitted_at: Date.now(),
    snapshot: result('ok', { session_id: sessionId, revision: 1 }),
  };
  const reply = await edge.nc.request(e2e.stack.subjects.sessionUpdateOf(edgeId), encodeJson(payload), {
    timeout: 15_000,
  });
  return reply.json();
}

const refused = { error: { code: 'invalid_request', message: expect.stringMatching(/refused/) } };

it('a stolen token and NATS user stop working when their edge rotates; other edges keep working', async () => {
  const x = await enroll('x');
  const y = await enroll('y');
  const xConnection = await connectEdge(x, 'x');
  const yConnection = await connectEdge(y, 'y');
  expect(await update(xConnection, x.connector.id, x.edge_token)).toMatchObject({ ok: true });

  const rotated = await alice.call<Enrollment>(
    'POST',
    `/api/v1/edge-agents/connectors/${x.connector.id}/credentials`,
  );
  expect(rotated.status).toBe(200);
  const fresh = rotated.body.data!;
  expect(fresh.edge_token).not.toBe(x.edge_token);

  // The old NATS user is dropped and refused from now on.
  expect(await within(REVOKED_WITHIN_MS, () => xConnection.nc.isClosed())).toBe(true);
  await expect(connectEdge(x, 'x-again')).rejects.toThrow(/authorization|revoked/i);
  // The old token is refused even on the edge's new connection; the new one works.
  const xFresh = await connectEdge(fresh, 'x-fresh');
  expect(await update(xFresh, x.connector.id, x.edge_token)).toMatchObject(refused);
  expect(await update(xFresh, x.connector.id, fresh.edge_token)).toMatchObject({ ok: true });
  // The other edge noticed nothing.
  expect(yConnection.nc.isClosed()).toBe(false);
  expect(await update(yConnection, y.connector.id, y.edge_token)).toMatchObject({ ok: true });
});

it('only the owner deletes a connector; deleting revokes its token and NATS user, not the others', async () => {
  const doomed = await enroll('doomed');
  const kept = await enroll('kept');
  const doomedConnection = await connectEdge(doomed, 'doomed');
  const keptConnection = await connectEdge(kept, 'kept');

  const foreign = await bob.call('DELETE', `/api/v1/edge-agents/connectors/${doomed.connector.id}`);
  expect(foreign.status).toBe(404);
  expect(await update(doomedConnection, doomed.connector.id, doomed.edge_token)).toMatchObject({ ok: true });

  const deleted = await alice.call('DELETE', `/api/v1/edge-agents/connectors/${doomed.connector.id}`);
  expect(deleted.status).toBe(200);
  expect(await within(REVOKED_WITHIN_MS, () => doomedConnection.nc.isClosed())).toBe(true);
  await expect(connectEdge(doomed, 'doomed-again')).rejects.toThrow(/authorization|revoked/i);

  const listed = await alice.call<{ id: string }[]>('GET', '/api/v1/edge-agents/connectors');
  expect(listed.body.data?.map((connector) => connector.id)).not.toContain(doomed.connector.id);
  expect(keptConnection.nc.isClosed()).toBe(false);
  expect(await update(keptConnection, kept.connector.id, kept.edge_token)).toMatchObject({ ok: true });
  const again = await alice.call('DELETE', `/api/v1/edge-agents/connectors/${doomed.connector.id}`);
  expect(again.status).toBe(404);
});
