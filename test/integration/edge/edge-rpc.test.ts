// Boots a real edge (scripted agent) against the shared NATS and drives it only through
// edge_agent_v1 requests; a raw responder stands in for the router's session-update subject.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  Limits,
  Subjects,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
  type EdgeHeartbeat,
  type SessionUpdate,
} from '#contracts';
import { connectNats, decodeJson, encodeJson, requestJson } from '#messaging';
import { testServices, uniqueNamespace, eventually } from '#test-support';
import { SCRIPTED_INSTALLATION } from '../../../apps/edge-connector/src/agent/scripted/index.js';
import { loadEdgeConfig } from '../../../apps/edge-connector/src/config.js';
import { startEdge, type RunningEdge } from '../../../apps/edge-connector/src/app.js';

const EDGE_ID = '4242';
const EDGE_TOKEN = 'edge-token-for-tests';
const ACTOR = '7';
const ACCESS = 'd'.repeat(32);
const WAIT_MS = 10_000;
const EDGE_POLL = { timeoutMs: WAIT_MS, intervalMs: 20 };

const script = {
  rules: [
    {
      match: { exact: 'slow' },
      steps: [
        { type: 'delay', ms: 1_500 },
        { type: 'reply', text: 'slow reply', deltas: 4, delay_ms: 20 },
      ],
    },
    { steps: [{ type: 'reply', text: 'Reply to {prompt_length} characters.', deltas: 5, delay_ms: 5 }] },
  ],
};

describe('edge connector over NATS', () => {
  let nc: NatsConnection;
  let subjects: Subjects;
  let edge: RunningEdge;
  let project: string;
  let responder: Subscription;
  let heartbeats: Subscription;
  const seen: EdgeHeartbeat[] = [];
  /** Acked updates, in the order the edge sent them. */
  const acked: SessionUpdate[] = [];
  /** Every attempt, including refused ones. */
  const attempts: SessionUpdate[] = [];
  let refuseNext = 0;

  beforeAll(async () => {
    const services = await testServices();
    const namespace = uniqueNamespace('edge');
    subjects = new Subjects(namespace);
    nc = await connectNats({ servers: services.natsUrl, name: 'edge-test' });
    responder = nc.subscribe(subjects.sessionUpdateWildcard, {
      callback: (_error, msg) => {
        const update = decodeJson<SessionUpdate>(msg.data);
        attempts.push(update);
        if (refuseNext > 0) {
          refuseNext -= 1;
          msg.respond(encodeJson({ error: { code: 'unavailable', message: 'refused by the test' } }));
          return;
        }
        acked.push(update);
        msg.respond(encodeJson({ ok: true, epoch: 'e1', sequence: acked.length, duplicate: false }));
      },
    });
    heartbeats = nc.subscribe(subjects.edgeHeartbeat, {
      callback: (_error, msg) => {
        seen.push(decodeJson<EdgeHeartbeat>(msg.data));
      },
    });
    await nc.flush();
    project = realpathSync(mkdtempSync(join(tmpdir(), 'edge-it-')));
    const scriptPath = join(project, 'script.json');
    writeFileSync(scriptPath, JSON.stringify(script));
    edge = await startEdge(
      loadEdgeConfig({
        TETHER_NATS_URL: services.natsUrl,
        TETHER_NAMESPACE: namespace,
        TETHER_LOG_LEVEL: 'error',
        TETHER_EDGE_ID: EDGE_ID,
        TETHER_EDGE_TOKEN: EDGE_TOKEN,
        TETHER_SCRIPTED_SCRIPT: scriptPath,
        TETHER_EDGE_ALLOW_ROOT: 'true',
      }),
    );
  });

  afterAll(async () => {
    await edge?.close();
    responder?.unsubscribe();
    heartbeats?.unsubscribe();
    await nc?.drain();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  const rpc = (
    request: Partial<EdgeAgentRequest> & { action: EdgeAgentRequest['action'] },
    envelope: Partial<EdgeAgentRPCRequest> = {},
  ): Promise<EdgeAgentResult> =>
    requestJson<EdgeAgentResult>(
      nc,
      subjects.edgeRpc(EDGE_ID),
      { version: 1, actor_id: ACTOR, ...envelope, request: { edge_id: EDGE_ID, ...request } },
      { timeoutMs: Limits.ROUTER_EDGE_RPC_TIMEOUT_MS },
    );

  const start = async (): Promise<string> => {
    const started = await rpc(
      { action: 'start', installation_id: SCRIPTED_INSTALLATION.id, project, access_id: ACCESS },
      { project_root: project },
    );
    expect(started).toMatchObject({ status: 'ok', revision: 1, project });
    return started.session_id as string;
  };

  /** Watches until the turn is over, as a client would. */
  const untilIdle = async (sessionId: string): Promise<EdgeAgentResult> => {
    let snapshot = await rpc({ action: 'poll', session_id: sessionId, access_id: ACCESS });
    for (let i = 0; i < 100 && snapshot.running; i += 1) {
      snapshot = await rpc({
        action: 'watch',
        session_id: sessionId,
        access_id: ACCESS,
        cursor: String(snapshot.revision),
      });
    }
    expect(snapshot.running).toBeFalsy();
    return snapshot;
  };

  const updatesOf = (sessionId: string): SessionUpdate[] =>
    acked.filter((update) => update.session_id === sessionId);

  it('announces itself with a heartbeat carrying its installations and capacity', async () => {
    const heartbeat = await eventually(() => seen[0], 'a heartbeat', EDGE_POLL);
    expect(heartbeat).toMatchObject({
      edge_id: EDGE_ID,
      edge_token: EDGE_TOKEN,
      device: hostname(),
      agent_kinds: ['scripted'],
      installations: [SCRIPTED_INSTALLATION],
      max_sessions: Limits.EDGE_LIVE_SESSIONS_MAX,
    });
  });

  it('discovers the scripted installation', async () => {
    const discovered = await rpc({ action: 'discover' });
    expect(discovered.status).toBe('ok');
    expect(discovered.installations).toEqual([SCRIPTED_INSTALLATION]);
  });

  it('runs a turn and streams every state to the router in revision order, ending with the closed one', async () => {
    const id = await start();
    const sent = await rpc({ action: 'send', session_id: id, access_id: ACCESS, text: 'hello edge' });
    expect(sent.status).toBe('ok');
    const done = await untilIdle(id);
    expect(done.messages).toEqual([
      { role: 'user', text: 'hello edge' },
      { role: 'assistant', text: 'Reply to 10 characters.' },
    ]);
    expect(done.turn_timing?.finished_ms).toEqual(expect.any(Number));

    const stopped = await rpc({ action: 'stop', session_id: id, access_id: ACCESS });
    expect(stopped).toMatchObject({ status: 'session_closed', closed: true });
    const last = await eventually(
      () => {
        const updates = updatesOf(id);
        const final = updates[updates.length - 1];
        return final?.revision === stopped.revision ? final : undefined;
      },
      'the closed state at the router',
      EDGE_POLL,
    );
    expect(last.snapshot).toMatchObject({ status: 'session_closed', closed: true, session_id: id });
    expect(last).toMatchObject({
      edge_id: EDGE_ID,
      edge_token: EDGE_TOKEN,
      actor_id: ACTOR,
      access_id: ACCESS,
    });
    const revisions = updatesOf(id).map((update) => update.revision);
    expect(revisions[0]).toBe(1);
    for (let i = 1; i < revisions.length; i += 1)
      expect(revisions[i]).toBeGreaterThan(revisions[i - 1] as number);
  });

  it('retries an update the router refused, until it is acked', async () => {
    const id = await start();
    await eventually(() => updatesOf(id)[0], 'the first update', EDGE_POLL);
    refuseNext = 1;
    const renamed = await rpc({ action: 'rename', session_id: id, access_id: ACCESS, title: 'Renamed' });
    expect(renamed.title).toBe('Renamed');
    const delivered = await eventually(
      () => updatesOf(id).find((update) => update.revision === renamed.revision),
      'the retried update',
      EDGE_POLL,
    );
    expect(delivered.snapshot.title).toBe('Renamed');
    const tries = attempts.filter(
      (update) => update.session_id === id && update.revision === renamed.revision,
    );
    expect(tries.length).toBeGreaterThanOrEqual(2);
    await rpc({ action: 'stop', session_id: id, access_id: ACCESS });
  });

  it('scopes sessions by owner and access', async () => {
    const id = await start();
    expect((await rpc({ action: 'poll', session_id: id, access_id: ACCESS }, { actor_id: '8' })).status).toBe(
      'not_found',
    );
    expect((await rpc({ action: 'poll', session_id: id })).status).toBe('not_found');
    const listed = await rpc({ action: 'sessions', access_id: ACCESS });
    expect(listed.sessions?.some((summary) => summary.session_id === id)).toBe(true);
    expect(
      (await rpc({ action: 'sessions', access_id: ACCESS }, { actor_id: '8' })).sessions ?? [],
    ).toHaveLength(0);
    await rpc({ action: 'stop', session_id: id, access_id: ACCESS });
  });

  it('refuses malformed, oversized and invalid requests without changing anything', async () => {
    const subject = subjects.edgeRpc(EDGE_ID);
    const raw = async (data: Uint8Array): Promise<EdgeAgentResult> =>
      decodeJson<EdgeAgentResult>((await nc.request(subject, data, { timeout: 5_000 })).data);
    expect((await raw(new TextEncoder().encode('{not json'))).status).toBe('invalid_request');
    const huge = encodeJson({
      version: 1,
      actor_id: ACTOR,
      request: { edge_id: EDGE_ID, action: 'discover' },
      pad: 'x'.repeat(600 * 1024),
    });
    expect((await raw(huge)).status).toBe('invalid_request');
    expect((await rpc({ action: 'discover' }, { version: 2 })).status).toBe('invalid_request');
    expect((await rpc({ action: 'poll', session_id: 'e'.repeat(32) }, { reset_revision: 3 })).status).toBe(
      'invalid_request',
    );
    expect(
      (
        await rpc({
          action: 'transcript',
          session_id: 'e'.repeat(32),
          access_id: ACCESS,
          history_before: '1',
        })
      ).status,
    ).toBe('upgrade_required');
  });

  it('answers busy beyond 8 concurrent calls, and wakes waiting watches on a change', async () => {
    const id = await start();
    // The slow rule waits before replying, so watches on the dispatched revision hold their slots.
    const sent = await rpc({ action: 'send', session_id: id, access_id: ACCESS, text: 'slow' });
    expect(sent.running).toBe(true);
    const watches = Array.from({ length: Limits.EDGE_CONCURRENT_RPCS }, () =>
      rpc({ action: 'watch', session_id: id, access_id: ACCESS, cursor: String(sent.revision) }),
    );
    // One connection delivers in order: the edge has taken all 8 watches before this call.
    expect((await rpc({ action: 'discover' })).status).toBe('busy');
    const woken = await Promise.all(watches);
    for (const reply of woken) {
      expect(reply.status).toBe('ok');
      expect(reply.revision).toBeGreaterThan(sent.revision as number);
    }
    expect((await untilIdle(id)).messages?.[1]?.text).toBe('slow reply');
    await rpc({ action: 'stop', session_id: id, access_id: ACCESS });
  });
});
