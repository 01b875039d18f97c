import { encodeJson, JournalCipher } from '#messaging';
import { Aad, HistoryCipher } from '../../../apps/history/src/common/history-cipher.js';
import {
  HISTORY_KEY,
  HARNESS_TIMEOUT_MS,
  journalEntry,
  sessionId,
  SLOW_TEST_TIMEOUT_MS,
  startHarness,
  type HistoryHarness,
} from '../../support/history.js';

const OWNER = 'journal-owner';

interface SessionRow {
  revision: string;
  deleted: boolean;
  payload: Buffer | null;
  summary: Buffer | null;
}

describe('history: journal consumer', () => {
  let h: HistoryHarness;
  const cipher = new HistoryCipher(HISTORY_KEY);
  let edgeId: string;
  let accessId: string;

  beforeAll(async () => {
    h = await startHarness('journal');
    ({ edgeId, accessId } = await h.enroll(OWNER));
  }, HARNESS_TIMEOUT_MS);
  afterAll(() => h.close(), HARNESS_TIMEOUT_MS);

  async function journalRows(session: string): Promise<{ revision: string }[]> {
    const result = await h.db.query<{ revision: string }>(
      'SELECT revision::text AS revision FROM journal WHERE session_id = $1 ORDER BY revision',
      [session],
    );
    return result.rows;
  }

  async function sessionRows(session: string): Promise<SessionRow[]> {
    const result = await h.db.query<SessionRow>(
      'SELECT revision::text AS revision, deleted, payload, summary FROM session_histories WHERE session_id = $1',
      [session],
    );
    return result.rows;
  }

  it(
    'stores a message delivered twice once',
    async () => {
      const session = sessionId();
      const entry = journalEntry({ actorId: OWNER, edgeId, accessId, sessionId: session }, 7);
      await h.publishEntry(entry);
      const last = await h.publishEntry(entry);
      await h.caughtUp(last);

      expect(await journalRows(session)).toEqual([{ revision: '7' }]);
      const rows = await sessionRows(session);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ revision: '7', deleted: false });
      // Stored encrypted: no plaintext in the row, and it opens only under its own scope.
      const stored = rows[0]?.payload ?? Buffer.alloc(0);
      expect(stored.includes('message 7')).toBe(false);
      expect(stored.includes('Title at 7')).toBe(false);
      const key = { ownerId: OWNER, accessId, edgeId, sessionId: session };
      const payload = cipher.decryptJson<Record<string, unknown>>(stored, Aad.payload(key));
      // Live-only fields are not stored.
      expect(payload).not.toHaveProperty('models');
      expect(payload).not.toHaveProperty('approvals');
      expect(payload).toMatchObject({ session_id: session, thread_id: 'thread-1', title: 'Title at 7' });
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  it(
    'does not let an older revision overwrite a newer one',
    async () => {
      const session = sessionId();
      const scope = { actorId: OWNER, edgeId, accessId, sessionId: session };
      await h.publishEntry(journalEntry(scope, 3, { title: 'newer' }));
      const last = await h.publishEntry(journalEntry(scope, 2, { title: 'older' }));
      await h.caughtUp(last);

      expect(await journalRows(session)).toEqual([{ revision: '2' }, { revision: '3' }]);
      const rows = await sessionRows(session);
      expect(rows).toEqual([expect.objectContaining({ revision: '3' })]);
      const key = { ownerId: OWNER, accessId, edgeId, sessionId: session };
      expect(cipher.decryptJson(rows[0]?.summary ?? Buffer.alloc(0), Aad.summary(key))).toMatchObject({
        title: 'newer',
      });
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  it(
    'stores nothing for transient sessions or another owner’s access',
    async () => {
      const transient = sessionId();
      const foreign = sessionId();
      await h.publishEntry(journalEntry({ actorId: OWNER, edgeId, sessionId: transient }, 1));
      const last = await h.publishEntry(
        journalEntry({ actorId: 'intruder', edgeId, accessId, sessionId: foreign }, 1),
      );
      await h.caughtUp(last);

      expect(await journalRows(transient)).toEqual([]);
      expect(await sessionRows(transient)).toEqual([]);
      expect(await journalRows(foreign)).toEqual([]);
      expect(await sessionRows(foreign)).toEqual([]);
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  it(
    'tombstones the sessions of a deleted access and saves none of them afterwards',
    async () => {
      const { access } = await h.call('historyAccessCreate', {
        actor_id: OWNER,
        access: { name: 'doomed', kind: 'codex', edge_id: edgeId, installation_id: 'i2', project: '/q' },
      });
      const session = sessionId();
      const scope = { actorId: OWNER, edgeId, accessId: access.id, sessionId: session };
      await h.caughtUp(await h.publishEntry(journalEntry(scope, 1, { title: 'secret plans' })));
      expect(await sessionRows(session)).toHaveLength(1);

      await h.call('historyAccessDelete', { actor_id: OWNER, id: access.id });
      const tombstone = await sessionRows(session);
      expect(tombstone).toEqual([{ revision: '1', deleted: true, payload: null, summary: null }]);
      expect(await journalRows(session)).toEqual([]);

      const later = sessionId();
      await h.publishEntry(journalEntry(scope, 2, { title: 'after delete' }));
      const last = await h.publishEntry(journalEntry({ ...scope, sessionId: later }, 1));
      await h.caughtUp(last);
      expect(await sessionRows(session)).toEqual(tombstone);
      expect(await journalRows(session)).toEqual([]);
      expect(await sessionRows(later)).toEqual([]);
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  it(
    'drops invalid messages and keeps consuming',
    async () => {
      const session = sessionId();
      await h.publishRaw(session, new TextEncoder().encode('{not json'));
      await h.publishRaw(session, encodeJson({ v: 1, session_id: session }));
      // A valid entry published on another session's subject is not trusted either.
      await h.publishRaw(
        sessionId(),
        h.encode(journalEntry({ actorId: OWNER, edgeId, accessId, sessionId: session }, 1)),
      );
      // A row in plain text (not sealed by the router's journal key) is never stored.
      await h.publishRaw(
        session,
        encodeJson(journalEntry({ actorId: OWNER, edgeId, accessId, sessionId: session }, 2)),
      );
      // Nor one sealed under another key.
      await h.publishRaw(
        session,
        encodeJson(
          new JournalCipher('another-deployments-journal-key-0123456789').seal(
            journalEntry({ actorId: OWNER, edgeId, accessId, sessionId: session }, 3),
          ),
        ),
      );
      const last = await h.publishEntry(
        journalEntry({ actorId: OWNER, edgeId, accessId, sessionId: session }, 4),
      );
      await h.caughtUp(last);

      expect(await journalRows(session)).toEqual([{ revision: '4' }]);
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  it(
    'drops an invalid submission row and stores none for a transient session',
    async () => {
      const session = sessionId();
      const submission = (overrides: Record<string, unknown>, accessed = true) => ({
        v: 1,
        kind: 'submission',
        session_id: session,
        edge_id: edgeId,
        actor_id: OWNER,
        ...(accessed ? { access_id: accessId } : {}),
        epoch: 'e1',
        revision: 1,
        sequence: 1,
        prev_stream_seq: 0,
        fence: 0,
        submission: {
          client_message_id: '1764690000000-0123456789abcdef0123456789abcdef',
          fence: 0,
          payload_fingerprint: 'a'.repeat(64),
          dispatch_state: 'pending',
          submitted_at: Date.now(),
          ...overrides,
        },
        recorded_at: Date.now(),
      });
      await h.publishRaw(session, encodeJson(submission({ payload_fingerprint: 'not-a-fingerprint' })));
      await h.publishRaw(session, encodeJson(submission({ dispatch_state: 'sent' })));
      const last = await h.publishRaw(session, encodeJson(submission({}, false)));
      await h.caughtUp(last);

      const stored = await h.db.query('SELECT 1 FROM journal_submissions WHERE session_id = $1', [session]);
      expect(stored.rows).toEqual([]);
      expect(await journalRows(session)).toEqual([]);
    },
    SLOW_TEST_TIMEOUT_MS,
  );
});
