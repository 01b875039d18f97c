import { Limits, type SessionSummary } from '#contracts';
import {
  HARNESS_TIMEOUT_MS,
  journalEntry,
  sessionId,
  SLOW_TEST_TIMEOUT_MS,
  startHarness,
  type HistoryHarness,
} from '../../support/history.js';

const OWNER = 'sessions-owner';
const STORED = Limits.SESSIONS_PAGE_SIZE + 5;
const BASE_TIME = Date.UTC(2026, 0, 1);

describe('history: sessions list', () => {
  let h: HistoryHarness;
  let edgeId: string;
  let accessId: string;
  /** Session ids, oldest first. */
  const sessions: string[] = [];

  beforeAll(async () => {
    h = await startHarness('sessions');
    ({ edgeId, accessId } = await h.enroll(OWNER, 'codex'));
    let last = 0;
    for (let i = 0; i < STORED; i += 1) {
      const session = sessionId();
      sessions.push(session);
      // The first one is still running; every other one closed.
      const state = i === 0 ? { running: true } : { closed: true, status: 'ok' as const };
      last = await h.publishEntry(
        journalEntry(
          { actorId: OWNER, edgeId, accessId, sessionId: session },
          1,
          state,
          BASE_TIME + i * 1000,
        ),
      );
    }
    await h.caughtUp(last);
  }, HARNESS_TIMEOUT_MS);
  afterAll(() => h.close(), HARNESS_TIMEOUT_MS);

  const page = (n: number) =>
    h.call('historySessions', { actor_id: OWNER, access_id: accessId, edge_id: edgeId, page: n });

  it(
    'pages 50 at a time, newest first, with the total',
    async () => {
      const first = await page(1);
      const second = await page(2);
      expect(first.total).toBe(STORED);
      expect(first.sessions).toHaveLength(Limits.SESSIONS_PAGE_SIZE);
      expect(second.sessions).toHaveLength(STORED - Limits.SESSIONS_PAGE_SIZE);
      const newestFirst = [...sessions].reverse();
      expect([...first.sessions, ...second.sessions].map((s) => s.session_id)).toEqual(newestFirst);
      expect((await page(3)).sessions).toEqual([]);
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  it(
    'presents stored rows as closed unless they were running or open',
    async () => {
      const all: SessionSummary[] = [...(await page(1)).sessions, ...(await page(2)).sessions];
      const byId = new Map(all.map((s) => [s.session_id, s]));
      expect(byId.get(sessions[0]!)).toMatchObject({ running: true, closed: false, status: 'ok' });
      expect(byId.get(sessions[1]!)).toEqual({
        session_id: sessions[1],
        title: 'Title at 1',
        thread_id: 'thread-1',
        project: '/home/dev/project',
        updated_at: new Date(BASE_TIME + 1000).toISOString(),
        running: false,
        closed: true,
        status: 'session_closed',
      });
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  it(
    'shows nothing to another actor, another access or after the access is deleted',
    async () => {
      expect(
        await h.call('historySessions', {
          actor_id: 'someone-else',
          access_id: accessId,
          edge_id: edgeId,
          page: 1,
        }),
      ).toEqual({
        sessions: [],
        total: 0,
      });
      expect(
        await h.call('historySessions', {
          actor_id: OWNER,
          access_id: 'b'.repeat(32),
          edge_id: edgeId,
          page: 1,
        }),
      ).toEqual({ sessions: [], total: 0 });
      await h.call('historyAccessDelete', { actor_id: OWNER, id: accessId });
      expect(await page(1)).toEqual({ sessions: [], total: 0 });
    },
    SLOW_TEST_TIMEOUT_MS,
  );
});
