// Journal pages (reference orca §2.1 and its §7 history-page cases) on the real chain: a router
// sequences rows, history reduces them, and the api serves `GET /sessions/{id}/history` with the
// caller's grant checked. tail/before read the reduced items without splitting one row's items,
// after reads rows and publishes current state, and an unusable cursor answers a reset.
import 'reflect-metadata';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  type EdgeAgentResult,
  type HistoryJournalPageReply,
  type HistoryJournalPageRequest,
  type JournalPage,
} from '#contracts';
import { connectNats } from '#messaging';
import { signToken, testServices, TEST_JWT_SECRET } from '#test-support';
import { createApiApp } from '../../../apps/api/src/app.js';
import {
  HARNESS_TIMEOUT_MS,
  sessionId,
  useJournalStack,
  type HistoryHarness,
} from '../../support/journal.js';

const OWNER = 'page-owner';
const STRANGER = 'page-stranger';
/** How long history may take to apply the rows a test just sent. */
const APPLY_TIMEOUT_MS = 15_000;

const chain = useJournalStack('jpage', OWNER);

describe('journal pages', () => {
  let h: HistoryHarness;
  let api: NestFastifyApplication;
  let apiNc: Awaited<ReturnType<typeof connectNats>>;
  let baseUrl: string;
  let edgeId: string;
  let accessId: string;
  let strangerEdge: string;
  let strangerAccess: string;

  beforeAll(async () => {
    ({ h, edgeId, accessId } = chain.stack);
    const services = await testServices();
    apiNc = await connectNats({ servers: services.natsUrl, name: 'test-jpage-api' });
    api = await createApiApp({
      config: {
        nats: { servers: [services.natsUrl] },
        namespace: h.subjects.namespace,
        logLevel: 'error',
        http: { host: '127.0.0.1', port: 0 },
        jwt: { key: { kind: 'secret', secret: TEST_JWT_SECRET } },
      },
      nc: apiNc,
      subjects: h.subjects,
    });
    await api.listen(0, '127.0.0.1');
    const address = api.getHttpServer().address();
    if (typeof address !== 'object' || address === null) throw new Error('api did not bind');
    baseUrl = `http://127.0.0.1:${address.port}`;
    ({ edgeId: strangerEdge, accessId: strangerAccess } = await h.enroll(STRANGER));
  }, HARNESS_TIMEOUT_MS);

  afterAll(async () => {
    await api?.close();
    await apiNc?.drain().catch(() => undefined);
  }, HARNESS_TIMEOUT_MS);

  /** Sends snapshots as revisions 1..n of a new session and waits until history applied them. */
  async function session(snapshots: Partial<EdgeAgentResult>[]): Promise<{ sid: string; epoch: string }> {
    const sid = sessionId();
    let epoch = '';
    for (const [i, snapshot] of snapshots.entries()) {
      const revision = i + 1;
      epoch = (await chain.stack.send(chain.stack.update(sid, revision, snapshot))).epoch;
    }
    const deadline = Date.now() + APPLY_TIMEOUT_MS;
    for (;;) {
      const state = await h.db.query<{ head_sequence: string }>(
        'SELECT head_sequence FROM journal_states WHERE session_id = $1',
        [sid],
      );
      if (Number(state.rows[0]?.head_sequence ?? 0) >= snapshots.length) return { sid, epoch };
      if (Date.now() > deadline) throw new Error('history did not apply the rows in time');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const page = (sid: string, request: Partial<HistoryJournalPageRequest>) =>
    h.call('historyJournalPage', {
      actor_id: OWNER,
      access_id: accessId,
      edge_id: edgeId,
      session_id: sid,
      direction: 'tail',
      ...request,
    });
  const ok = (reply: HistoryJournalPageReply): JournalPage => {
    if (!reply.ok) throw new Error(`expected a page, got reset ${reply.reset}`);
    return reply.page;
  };
  const ids = (p: { items: { itemId: string }[] }) => p.items.map((item) => item.itemId);

  const user = (text: string) => ({ role: 'user', text });
  /**
   * Row 3 creates two items (m:0:2 and activity c1) plus c2; row 6 revises m:0:1; row 7 drops c2.
   * Live items by creation: m:0:0@1 m:0:1@2 m:0:2@3 a:0:c1@3 m:0:3@4 m:0:4@5.
   */
  const TIMELINE: Partial<EdgeAgentResult>[] = (() => {
    const acts = [
      { id: 'c1', kind: 'command' },
      { id: 'c2', kind: 'command' },
    ];
    const m = [user('u0'), user('a1'), user('u2'), user('a3'), user('u4')];
    return [
      { messages: m.slice(0, 1) },
      { messages: m.slice(0, 2) },
      { messages: m.slice(0, 3), activities: acts },
      { messages: m.slice(0, 4), activities: acts },
      { messages: m.slice(0, 5), activities: acts },
      { messages: [m[0]!, user('a1 revised'), ...m.slice(2)], activities: acts },
      { messages: [m[0]!, user('a1 revised'), ...m.slice(2)], activities: acts.slice(0, 1) },
    ];
  })();

  let timeline: { sid: string; epoch: string };
  beforeAll(async () => {
    timeline = await session(TIMELINE);
  }, HARNESS_TIMEOUT_MS);

  it('pages tail and before without splitting the items one row created', async () => {
    const { sid, epoch } = timeline;
    // Limit 3 would cut row 3's pair (c1 kept, m:0:2 dropped): the whole row moves to the next page.
    const tail = ok(await page(sid, { limit: 3 }));
    expect(ids(tail)).toEqual(['m:0:3', 'm:0:4']);
    expect(tail).toMatchObject({
      hasOlder: true,
      hasNewer: false,
      window: { nextCursor: { epoch, sequence: 4 } },
    });
    const before = ok(await page(sid, { direction: 'before', cursor: tail.window.nextCursor, limit: 3 }));
    expect(ids(before)).toEqual(['m:0:1', 'm:0:2', 'a:0:c1']);
    expect(before).toMatchObject({
      hasOlder: true,
      hasNewer: true,
      window: { nextCursor: { epoch, sequence: 2 } },
    });
    expect(before.items[0]).toMatchObject({ revision: 2, body: { type: 'message', text: 'a1 revised' } });
    const last = ok(await page(sid, { direction: 'before', cursor: before.window.nextCursor, limit: 3 }));
    expect(ids(last)).toEqual(['m:0:0']);
    expect(last.hasOlder).toBe(false);
  });

  it('pages after: rows beyond the cursor at their current state, tombstones as removed ids', async () => {
    const { sid, epoch } = timeline;
    const tailEnd = ok(await page(sid, { direction: 'after', cursor: { epoch, sequence: 5 } }));
    expect(ids(tailEnd)).toEqual(['m:0:1']);
    expect(tailEnd.items[0]).toMatchObject({ revision: 2, sequence: 2 });
    expect(tailEnd.removedItemIds).toEqual(['a:0:c2']);
    expect(tailEnd).toMatchObject({
      hasNewer: false,
      hasOlder: true,
      window: { nextCursor: { epoch, sequence: 7 } },
    });
    const first = ok(await page(sid, { direction: 'after', cursor: { epoch, sequence: 0 }, limit: 2 }));
    expect(ids(first)).toEqual(['m:0:0', 'm:0:1']);
    expect(first).toMatchObject({
      hasNewer: true,
      hasOlder: false,
      window: { nextCursor: { epoch, sequence: 2 } },
    });
  });

  it('answers each reset reason with a bounded snapshot inline', async () => {
    const { sid, epoch } = timeline;
    const expectReset = (reply: HistoryJournalPageReply, reason: string) => {
      expect(reply.ok).toBe(false);
      if (reply.ok) return;
      expect(reply.reset).toBe(reason);
      expect(reply.snapshot.cursor).toEqual({ epoch, sequence: 7 });
      expect(ids(reply.snapshot)).toEqual(['m:0:0', 'm:0:1', 'm:0:2', 'a:0:c1', 'm:0:3', 'm:0:4']);
    };
    expectReset(
      await page(sid, { direction: 'after', cursor: { epoch: 'other', sequence: 1 } }),
      'epoch_changed',
    );
    expectReset(
      await page(sid, { direction: 'before', cursor: { epoch: 'other', sequence: 1 } }),
      'epoch_changed',
    );
    expectReset(await page(sid, { direction: 'after', cursor: { epoch, sequence: 8 } }), 'cursor_ahead');
    expectReset(await page(sid, { direction: 'after' }), 'cursor_ahead');

    // Compaction raised the floor to 4: sitting on it (3) is fine, below it is not.
    await h.db.query('UPDATE journal_states SET oldest_sequence = 4 WHERE session_id = $1', [sid]);
    try {
      expectReset(
        await page(sid, { direction: 'after', cursor: { epoch, sequence: 2 } }),
        'cursor_compacted',
      );
      expect((await page(sid, { direction: 'after', cursor: { epoch, sequence: 3 } })).ok).toBe(true);
      // tail and before read the reduced items, so they survive compaction.
      expect((await page(sid, { direction: 'before', cursor: { epoch, sequence: 2 } })).ok).toBe(true);
    } finally {
      await h.db.query('UPDATE journal_states SET oldest_sequence = 1 WHERE session_id = $1', [sid]);
    }
  });

  it('answers journal_gap when the rows after the cursor have a hole', async () => {
    const { sid, epoch } = await session(TIMELINE.slice(0, 4));
    // The reducer applied row 4 over a row it gave up on (a forced apply): row 3 is missing.
    await h.db.query('DELETE FROM journal WHERE session_id = $1 AND sequence = 3', [sid]);
    const reply = await page(sid, { direction: 'after', cursor: { epoch, sequence: 1 } });
    expect(reply).toMatchObject({ ok: false, reset: 'journal_gap' });
    expect((await page(sid, { direction: 'after', cursor: { epoch, sequence: 3 } })).ok).toBe(true);
  });

  it('serves an after page the items a tail page shows, and only in the session’s own live scope', async () => {
    const { sid, epoch } = await session(TIMELINE.slice(0, 3));
    const tail = ok(await page(sid, {}));
    const after = ok(await page(sid, { direction: 'after', cursor: { epoch, sequence: 0 } }));
    expect(after.items).toEqual(tail.items);
    expect(ids(after)).toEqual(['m:0:0', 'm:0:1', 'm:0:2', 'a:0:c1', 'a:0:c2']);
    expect(after.removedItemIds).toEqual([]);
    const cursor = { epoch, sequence: 1 };
    await expect(page(sid, { direction: 'after', cursor, access_id: strangerAccess })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(
      page(sid, {
        direction: 'after',
        cursor,
        actor_id: STRANGER,
        access_id: strangerAccess,
        edge_id: strangerEdge,
      }),
    ).rejects.toMatchObject({ code: 'not_found' });
    await h.db.query('UPDATE session_histories SET deleted = true WHERE session_id = $1', [sid]);
    await expect(page(sid, { direction: 'after', cursor })).rejects.toMatchObject({ code: 'not_found' });
    await expect(page(sid, {})).rejects.toMatchObject({ code: 'not_found' });
  });

  it('replaces an item over the item bound by a stand-in', async () => {
    const { sid } = await session([{ messages: [user('small'), user('x'.repeat(70 * 1024))] }]);
    const tail = ok(await page(sid, {}));
    expect(tail.items).toEqual([
      expect.objectContaining({ itemId: 'm:0:0', body: expect.objectContaining({ text: 'small' }) }),
      { itemId: 'm:0:1', revision: 1, sequence: 1, observedAt: expect.any(Number), oversize: true },
    ]);
  });

  describe('over HTTP', () => {
    const get = async (actor: string, sid: string, query: Record<string, string>) => {
      const url = new URL(`${baseUrl}/api/v1/sessions/${sid}/history`);
      for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
      const response = await fetch(url, {
        headers: { authorization: `Bearer ${await signToken(TEST_JWT_SECRET, actor)}` },
      });
      return { status: response.status, body: (await response.json()) as { data?: HistoryJournalPageReply } };
    };

    it('serves pages with the limit strict at the boundary and the cursor as <epoch>:<sequence>', async () => {
      const { sid, epoch } = timeline;
      const scope = { edge_id: edgeId, access_id: accessId };
      const full = await get(OWNER, sid, { ...scope, limit: '200' });
      expect(full.status).toBe(200);
      expect(ids(ok(full.body.data!))).toHaveLength(6);
      expect(ok((await get(OWNER, sid, { ...scope })).body.data!).items).toHaveLength(6);
      for (const limit of ['201', '0', '-1', '1.5', 'ten', '']) {
        expect((await get(OWNER, sid, { ...scope, limit })).status).toBe(400);
      }
      const after = await get(OWNER, sid, { ...scope, direction: 'after', cursor: `${epoch}:5` });
      expect(ok(after.body.data!).removedItemIds).toEqual(['a:0:c2']);
      expect((await get(OWNER, sid, { ...scope, direction: 'after', cursor: 'nocolon' })).status).toBe(400);
      expect((await get(OWNER, sid, { ...scope, direction: 'sideways' })).status).toBe(400);
    });

    it('answers 404 to a caller who does not own the session', async () => {
      const { sid } = timeline;
      // The stranger's own grant, someone else's session: the page query is scoped to him.
      expect((await get(STRANGER, sid, { edge_id: strangerEdge, access_id: strangerAccess })).status).toBe(
        404,
      );
      // The owner's grant named by the stranger: refused by the authorization.
      expect((await get(STRANGER, sid, { edge_id: edgeId, access_id: accessId })).status).toBe(404);
    });
  });
  it('streams a snapshot, then batches from the cursor, over SSE', async () => {
    const { sid, epoch } = timeline;
    const abort = new AbortController();
    const response = await fetch(
      `${baseUrl}/api/v1/sessions/${sid}/events?edge_id=${edgeId}&access_id=${accessId}`,
      {
        headers: {
          authorization: `Bearer ${await signToken(TEST_JWT_SECRET, OWNER)}`,
          'last-event-id': `${epoch}:5`,
        },
        signal: abort.signal,
      },
    );
    try {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
      expect(text).toMatch(new RegExp(`^id: ${epoch}:7\nevent: batch\n`));
      expect(text).toContain('"removedItemIds":["a:0:c2"]');
    } finally {
      abort.abort();
    }
  });
});
