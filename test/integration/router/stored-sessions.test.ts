// The Manager side of durable history (reference §7 edge_agent_history_test.go), with a real
// router and a real history service in-process on one namespace, and a raw NATS responder as the
// edge. Rows are saved the way production saves them: journal entries through JetStream.
import { jest } from '@jest/globals';
import {
  edgeToken,
  result,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
} from '#contracts';
import { encodeJson, RpcRemoteError, requestService } from '#messaging';
import { eventually, testServices, TEST_EDGE_SECRET } from '#test-support';
import type { Msg } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import type { RunningRouter } from '../../../apps/session-router/src/app.js';
import {
  HARNESS_TIMEOUT_MS,
  journalEntry,
  sessionId,
  startHarness,
  type HistoryHarness,
} from '../../support/history.js';
import { fakeEdge, startTestRouter, type Suite } from '../../support/router.js';

jest.setTimeout(30_000);

const OWNER = 'stored-owner';

/** A scripted edge session: what a fake edge answers for snapshot, poll, send, stop, delete. */
interface FakeSession {
  revision: number;
  window: number;
  messages: { role: string; text: string }[];
  closed: boolean;
}

describe('router + history: stored sessions', () => {
  let h: HistoryHarness;
  let router: RunningRouter;
  let redis: Redis;
  let edgeId: string;
  let accessId: string;

  beforeAll(async () => {
    h = await startHarness('stored');
    const services = await testServices();
    router = await startTestRouter({
      natsUrl: services.natsUrl,
      redisUrl: services.redisUrl,
      namespace: h.subjects.namespace,
    });
    redis = new Redis(services.redisUrl);
    ({ edgeId, accessId } = await h.enroll(OWNER));
  }, HARNESS_TIMEOUT_MS);

  afterAll(async () => {
    await router?.close();
    const keys = await redis.keys(`${h.subjects.namespace}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await h?.close();
  }, HARNESS_TIMEOUT_MS);

  const suite = (): Suite => ({ nc: h.nc, subjects: h.subjects }) as unknown as Suite;

  const route = (request: Omit<EdgeAgentRequest, 'edge_id'>, actor = OWNER) =>
    requestService(
      h.nc,
      h.subjects,
      'routerEdgeAgent',
      { actor_id: actor, request: { edge_id: edgeId, access_id: accessId, ...request }, project_root: '/p' },
      { timeoutMs: 20_000 },
    );

  /** Stores a session row the way the journal does, and waits for history to have it. */
  async function save(session: string, revision: number, snapshot: Partial<EdgeAgentResult> = {}) {
    const entry = journalEntry({ actorId: OWNER, edgeId, accessId, sessionId: session }, revision, {
      history_windowing: true,
      files_available: true,
      ...snapshot,
    });
    await h.caughtUp(await h.publishEntry(entry));
  }

  /** A fake edge keeping sessions in memory, with the reference's reset rule on send. */
  function scriptedEdge() {
    const sessions = new Map<string, FakeSession>();
    const view = (id: string, s: FakeSession): EdgeAgentResult =>
      result('ok', {
        session_id: id,
        revision: s.revision,
        window: s.window,
        messages: s.messages,
        closed: s.closed,
        running: false,
        history_windowing: true,
        title: 'live title',
        models: [{ id: 'live-model' }],
      });
    const edge = fakeEdge(suite(), edgeId, (rpc: EdgeAgentRPCRequest) => {
      const id = rpc.request.session_id ?? '';
      const s = sessions.get(id);
      if (!s) return result('not_found');
      switch (rpc.request.action) {
        case 'send':
          // The edge's rule: an empty window does not roll; otherwise only on its journaled revision.
          if (rpc.reset_revision !== undefined && s.messages.length > 0) {
            if (rpc.reset_revision !== s.revision) return result('busy');
            s.window += 1;
            s.messages = [];
          }
          s.messages.push(
            { role: 'user', text: rpc.request.text ?? '' },
            { role: 'assistant', text: 'done' },
          );
          s.revision += 2;
          return view(id, s);
        case 'stop':
          s.closed = true;
          s.revision += 1;
          return view(id, s);
        case 'delete':
          sessions.delete(id);
          return result('ok');
        default:
          return view(id, s);
      }
    });
    /** What the edge's own session update of `id` carries to the router's journal. */
    const journal = (id: string) => {
      const s = sessions.get(id)!;
      return requestService(
        h.nc,
        h.subjects,
        'routerSessionUpdate',
        {
          edge_id: edgeId,
          edge_token: edgeToken(TEST_EDGE_SECRET, edgeId),
          actor_id: OWNER,
          access_id: accessId,
          session_id: id,
          revision: s.revision,
          emitted_at: Date.now(),
          snapshot: view(id, s),
        },
        { timeoutMs: 10_000 },
      );
    };
    return { edge, sessions, journal };
  }

  /** A fresh session on the scripted edge, its first state (revision 1, empty window) journaled. */
  async function journaledSession() {
    const session = sessionId();
    const scripted = scriptedEdge();
    scripted.sessions.set(session, { revision: 1, window: 0, messages: [], closed: false });
    await scripted.edge.ready();
    await scripted.journal(session);
    return { session, ...scripted };
  }

  /**
   * A transcript page, asked once: the router has history answer only after applying what the
   * journal held, so a round journaled before the call is never skipped (no polling here).
   */
  const archivedPage = (session: string, before: number) =>
    route({ action: 'transcript', session_id: session, history_before: String(before) });

  it('answers poll, watch and stop of an offline edge with the archived snapshot, live-only fields stripped', async () => {
    const session = sessionId();
    await save(session, 4, { title: 'Plans', running: true });
    for (const action of ['poll', 'stop'] as const) {
      const reply = await route({ action, session_id: session });
      expect(reply).toMatchObject({
        status: 'ok',
        session_id: session,
        archived: true,
        closed: true,
        running: false,
        history_persistent: true,
        title: 'Plans',
        revision: 4,
      });
      expect(reply.models).toBeUndefined();
      expect(reply.approvals).toBeUndefined();
    }
    const watched = await route({ action: 'watch', session_id: session, cursor: '4' });
    expect(watched).toMatchObject({ status: 'ok', archived: true });
    // No stored row: the edge's own answer stands.
    await expect(route({ action: 'poll', session_id: sessionId() })).resolves.toEqual(result('unavailable'));
  });

  it('seeds resume only from a session row that has applied the journal as the router saw it', async () => {
    const { session, edge } = await journaledSession();
    const scope = { actor_id: OWNER, access_id: accessId, edge_id: edgeId, session_id: session };
    // What the router asks history: the journal's position of the session rides along.
    const asked: { stream_sequence?: number }[] = [];
    const spy = h.nc.subscribe(h.subjects.requests.historyResumeSeed, {
      callback: (_error, msg) => {
        asked.push(msg.json());
      },
    });
    try {
      await eventually(
        async () => (await h.call('historySnapshot', scope)).state === 'stored' || undefined,
        'history storing the session',
      );
      await expect(route({ action: 'resume', session_id: session })).resolves.toMatchObject({ status: 'ok' });
      expect(asked).toEqual([{ ...scope, stream_sequence: expect.any(Number) }]);
    } finally {
      spy.unsubscribe();
      edge.stop();
    }
    const journaled = asked[0]!.stream_sequence!;
    // A history that has not applied that row (it lags the journal) answers unavailable after its
    // bounded wait, instead of a seed the journal has moved past.
    await expect(
      h.call('historyResumeSeed', { ...scope, stream_sequence: journaled + 1_000 }),
    ).rejects.toMatchObject({ code: 'unavailable' });
    await expect(
      h.call('historyResumeSeed', { ...scope, stream_sequence: journaled }),
    ).resolves.toMatchObject({ state: 'stored', resume: { revision: 1 } });
    // A deleted session is deleted, however far the journal had gone.
    await h.call('historyDelete', scope);
    await expect(
      h.call('historyResumeSeed', { ...scope, stream_sequence: journaled + 1_000 }),
    ).resolves.toEqual({ state: 'deleted' });
  });

  it('seeds resume from history without the native thread id; none is resume_unavailable', async () => {
    const session = sessionId();
    await save(session, 6, { title: 'Seeded', model: 'm1', window: 2, started_at: '2026-01-01T00:00:00Z' });
    const seen: EdgeAgentRPCRequest[] = [];
    const edge = fakeEdge(suite(), edgeId, (rpc) => {
      seen.push(rpc);
      return result('ok', { session_id: rpc.request.session_id, revision: (rpc.resume?.revision ?? 0) + 1 });
    });
    await edge.ready();
    try {
      const reply = await route({ action: 'resume', session_id: session });
      expect(reply).toMatchObject({ status: 'ok', revision: 7 });
      expect(seen[0]?.resume).toEqual({
        session_id: session,
        revision: 6,
        window: 2,
        title: 'Seeded',
        model: 'm1',
        started_at: '2026-01-01T00:00:00Z',
        messages: [{ role: 'user', text: 'message 6' }],
      });
      expect(JSON.stringify(seen[0]?.resume)).not.toContain('thread-1');

      await expect(route({ action: 'resume', session_id: sessionId() })).resolves.toEqual(
        result('resume_unavailable'),
      );
      expect(seen).toHaveLength(1);
    } finally {
      edge.stop();
    }
  });

  it('renames into history, lists the override while offline, and lays it over live replies', async () => {
    const session = sessionId();
    await save(session, 3, { title: 'Native title' });
    const renamed = await route({ action: 'rename', session_id: session, title: '  Renamed  ' });
    expect(renamed).toMatchObject({
      status: 'ok',
      archived: true,
      closed: true,
      running: false,
      title: 'Renamed',
    });

    const listed = await route({ action: 'sessions' });
    expect(listed.status).toBe('ok');
    expect(listed.sessions?.find((s) => s.session_id === session)).toMatchObject({
      title: 'Renamed',
      closed: true,
      status: 'session_closed',
    });

    const { edge, sessions } = scriptedEdge();
    sessions.set(session, { revision: 3, window: 0, messages: [], closed: false });
    await edge.ready();
    try {
      const live = await route({ action: 'poll', session_id: session });
      expect(live).toMatchObject({ status: 'ok', title: 'Renamed', revision: 3 });
      expect(live.archived).toBeUndefined();
    } finally {
      edge.stop();
    }
    // The override is ciphertext at rest.
    const rows = await h.db.query<{ title_override: Buffer }>(
      'SELECT title_override FROM session_histories WHERE session_id = $1',
      [session],
    );
    expect(rows.rows[0]?.title_override.includes('Renamed')).toBe(false);
  });

  it('lays a rename over the live replies of every router replica at once', async () => {
    // Each replica keeps the overrides it read; a rename through one must reach the others.
    const services = await testServices();
    const second = await startTestRouter({
      natsUrl: services.natsUrl,
      redisUrl: services.redisUrl,
      namespace: h.subjects.namespace,
    });
    const session = sessionId();
    await save(session, 3, { title: 'Native title' });
    const { edge, sessions } = scriptedEdge();
    sessions.set(session, { revision: 3, window: 0, messages: [], closed: false });
    await edge.ready();
    // The queue group spreads the polls over both replicas: 40 leave each a cached answer.
    const titles = async () =>
      new Set(
        await Promise.all(
          Array.from(
            { length: 40 },
            async () => (await route({ action: 'poll', session_id: session })).title,
          ),
        ),
      );
    try {
      expect(await titles()).toEqual(new Set(['live title']));
      await expect(route({ action: 'rename', session_id: session, title: 'Renamed' })).resolves.toMatchObject(
        {
          title: 'Renamed',
        },
      );
      expect(await titles()).toEqual(new Set(['Renamed']));
      await expect(route({ action: 'rename', session_id: session, title: 'Again' })).resolves.toMatchObject({
        title: 'Again',
      });
      expect(await titles()).toEqual(new Set(['Again']));
    } finally {
      edge.stop();
      await second.close();
    }
  });

  it('reads the override after a watch has waited, so a rename made meanwhile is in its reply', async () => {
    const session = sessionId();
    await save(session, 3, { title: 'Native title' });
    const held: Msg[] = [];
    const edge = h.nc.subscribe(h.subjects.edgeRpc(edgeId), {
      callback: (_error, msg) => {
        held.push(msg);
      },
    });
    await h.nc.flush();
    try {
      const watching = route({ action: 'watch', session_id: session, cursor: '3' });
      await eventually(() => (held.length === 1 ? true : undefined), 'the watch to reach the edge');
      const renamed = await route({ action: 'rename', session_id: session, title: 'Renamed meanwhile' });
      expect(renamed).toMatchObject({ status: 'ok', title: 'Renamed meanwhile' });

      held[0]!.respond(encodeJson(result('ok', { session_id: session, revision: 4, title: 'live title' })));
      expect(await watching).toMatchObject({ status: 'ok', revision: 4, title: 'Renamed meanwhile' });
    } finally {
      edge.unsubscribe();
    }
  });

  it('deletes with a tombstone first, stops and deletes live, and the tombstone blocks later saves', async () => {
    const session = sessionId();
    await save(session, 2);
    const { edge, sessions } = scriptedEdge();
    sessions.set(session, { revision: 2, window: 0, messages: [], closed: false });
    await edge.ready();
    try {
      await expect(route({ action: 'delete', session_id: session })).resolves.toEqual(
        result('ok', { history_persistent: true }),
      );
      expect(edge.actions()).toEqual(['stop', 'delete']);
    } finally {
      edge.stop();
    }
    await save(session, 9, { title: 'resurrected' });
    const rows = await h.db.query<{ deleted: boolean; payload: Buffer | null; revision: string }>(
      'SELECT deleted, payload, revision::text AS revision FROM session_histories WHERE session_id = $1',
      [session],
    );
    expect(rows.rows).toEqual([{ deleted: true, payload: null, revision: '2' }]);
    const journal = await h.db.query('SELECT 1 FROM journal WHERE session_id = $1', [session]);
    expect(journal.rowCount).toBe(0);
    await expect(route({ action: 'poll', session_id: session })).resolves.toEqual(result('not_found'));
    await expect(route({ action: 'resume', session_id: session })).resolves.toEqual(result('not_found'));
  });

  it('refuses a send to a session deleted while its edge was away, and deletes the edge copy', async () => {
    const { session, edge: before, sessions, journal } = await journaledSession();
    await route({ action: 'send', session_id: session, text: 'first round' });
    await journal(session);
    // The edge goes away with the session live, and the owner deletes it meanwhile.
    const held = sessions.get(session)!;
    before.stop();
    await expect(route({ action: 'delete', session_id: session })).resolves.toEqual(
      result('ok', { history_persistent: true }),
    );
    // Back, still holding the live session.
    const { edge, sessions: back } = scriptedEdge();
    back.set(session, held);
    await edge.ready();
    try {
      await expect(route({ action: 'send', session_id: session, text: 'still there?' })).resolves.toEqual(
        result('not_found'),
      );
      // Nothing reached the agent; the edge was told to delete its copy.
      expect(edge.actions()).toEqual(['delete']);
      expect(back.has(session)).toBe(false);
      await expect(route({ action: 'poll', session_id: session })).resolves.toEqual(result('not_found'));
    } finally {
      edge.stop();
    }
  });

  it('refuses to decrypt a payload copied to another scope', async () => {
    const source = sessionId();
    const target = sessionId();
    await save(source, 2, { title: 'Private' });
    await save(target, 2, { title: 'Other' });
    await h.db.query(
      `UPDATE session_histories SET payload = (SELECT payload FROM session_histories WHERE session_id = $1)
       WHERE session_id = $2`,
      [source, target],
    );
    const scope = { actor_id: OWNER, access_id: accessId, edge_id: edgeId, session_id: target };
    await expect(h.call('historySnapshot', scope)).rejects.toBeInstanceOf(RpcRemoteError);
    // The router never shows it: the edge's own answer stands.
    await expect(route({ action: 'poll', session_id: target })).resolves.toEqual(result('unavailable'));
  });

  it('sends once, with the journaled revision; history archives each finished round from the journal', async () => {
    const { session, edge, journal } = await journaledSession();
    try {
      // An empty window has nothing to archive: it does not roll.
      const first = await route({ action: 'send', session_id: session, text: 'first round' });
      expect(first).toMatchObject({ status: 'ok', window: 0 });
      expect(edge.requests.find((rpc) => rpc.request.action === 'send')?.reset_revision).toBe(1);
      await journal(session);

      const second = await route({ action: 'send', session_id: session, text: 'second round' });
      expect(second).toMatchObject({ status: 'ok', window: 1 });
      expect(edge.requests.filter((rpc) => rpc.request.action === 'send').at(-1)?.reset_revision).toBe(3);
      await journal(session);
      await route({ action: 'send', session_id: session, text: 'third round' });
      await journal(session);
      // One edge call a send: nothing is read from the edge or archived before it.
      expect(edge.actions()).toEqual(['send', 'send', 'send']);

      // The client pages back from the live window (2).
      const newest = await archivedPage(session, 2);
      expect(newest).toMatchObject({
        status: 'ok',
        window: 1,
        archived: true,
        closed: true,
        history_windowing: true,
      });
      expect(newest.messages?.[0]?.text).toBe('second round');
      const older = await archivedPage(session, 1);
      expect(older).toMatchObject({ window: 0, history_persistent: true });
      expect(older.messages?.map((m) => m.text)).toEqual(['first round', 'done']);
      // Nothing for a session that never archived a round.
      await expect(
        route({ action: 'transcript', session_id: sessionId(), history_before: '5' }),
      ).resolves.toEqual(result('not_found'));

      const page = await h.db.query<{ payload: Buffer }>(
        'SELECT payload FROM session_history_pages WHERE session_id = $1 AND "window" = 0',
        [session],
      );
      expect(page.rows[0]?.payload.includes('first round')).toBe(false);
    } finally {
      edge.stop();
    }
  });

  it('never rolls a window whose final state the journal lacks: busy, then archived once journaled', async () => {
    const { session, edge, sessions, journal } = await journaledSession();
    try {
      await route({ action: 'send', session_id: session, text: 'first round' });
      // The edge's update of the finished round is lost (a router died before acking it): the
      // journal holds revision 1 only, so the round would be lost with the roll.
      await expect(route({ action: 'send', session_id: session, text: 'second round' })).resolves.toEqual(
        result('busy'),
      );
      expect(sessions.get(session)).toMatchObject({ window: 0, revision: 3 });
      // The edge retries its newest state; once journaled, the send rolls and the round is archived.
      await journal(session);
      const second = await route({ action: 'send', session_id: session, text: 'second round' });
      expect(second).toMatchObject({ status: 'ok', window: 1 });
      await journal(session);
      const archived = await archivedPage(session, 1);
      expect(archived.messages?.map((m) => m.text)).toEqual(['first round', 'done']);
    } finally {
      edge.stop();
    }
  });

  it('passes the edge’s busy through: a running session is asked once, and nothing is archived', async () => {
    const session = sessionId();
    await save(session, 5);
    const running = fakeEdge(suite(), edgeId, () => result('busy'));
    await running.ready();
    try {
      await expect(route({ action: 'send', session_id: session, text: 'y' })).resolves.toEqual(
        result('busy'),
      );
      expect(running.actions()).toEqual(['send']);
      expect(running.requests[0]?.reset_revision).toBe(5);
    } finally {
      running.stop();
    }
    const pages = await h.db.query('SELECT 1 FROM session_history_pages WHERE session_id = $1', [session]);
    expect(pages.rowCount).toBe(0);
  });
});
