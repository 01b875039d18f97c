// The Orca reference's §7 history-page and crash-boundary cases that the router-driven paging suite
// (paging.test.ts) does not pin, against the real history service: journal messages are
// published on the session's JetStream subject exactly as the router writes them (sequenced, with
// the prev_stream_seq chain), submission rows included, and history's consumer folds them. The
// compaction cases drive history's own compactor with a small policy (the numbers are injectable)
// and a clock, so nothing waits two hours.
import {
  Limits,
  type EdgeAgentResult,
  type HistoryJournalPageReply,
  type HistoryJournalPageRequest,
  type JournalEntry,
  type JournalMessage,
  type JournalPage,
  type JournalSnapshot,
  type JournalSubmissionEntry,
  type Submission,
} from '#contracts';
import { JournalCompactor } from '../../../apps/history/src/journal/journal-compactor.service.js';
import { JournalService } from '../../../apps/history/src/journal/journal.service.js';
import { JournalPagesService } from '../../../apps/history/src/journal-pages/journal-pages.service.js';
import {
  HARNESS_TIMEOUT_MS,
  sessionId,
  startHarness,
  submissionRow,
  updateRow,
  type HistoryHarness,
} from '../../support/history.js';
import { journalSuiteTimeout } from '../../support/journal.js';

journalSuiteTimeout(2);

const OWNER = 'ref-page-owner';
const HOUR = 60 * 60_000;
const FINGERPRINT = 'f'.repeat(64);

/** A client_message_id of the envelope's shape, distinct per call. */
let minted = 0;
function clientMessageId(): string {
  minted += 1;
  return `${Date.now()}-${minted.toString(16).padStart(32, '0')}`;
}

describe('journal pages: reference orca §7 cases', () => {
  let h: HistoryHarness;
  let edgeId: string;
  let accessId: string;

  beforeAll(async () => {
    h = await startHarness('jref');
    ({ edgeId, accessId } = await h.enroll(OWNER));
  }, HARNESS_TIMEOUT_MS);
  afterAll(() => h.close(), HARNESS_TIMEOUT_MS);

  /** What was published for a session, with the stream sequence each message got. */
  interface Published {
    message: JournalMessage;
    streamSequence: number;
  }

  /**
   * One session's journal subject as the router writes it: every message carries the next
   * sequence of its epoch and the stream sequence of the previous message on the subject.
   */
  class Journal {
    readonly sid = sessionId();
    epoch = 'e1';
    private sequence = 0;
    private prev = 0;
    private revision = 0;
    readonly published: Published[] = [];

    /** An edge update at the next revision. */
    async update(snapshot: Partial<EdgeAgentResult>, recordedAt = Date.now()): Promise<number> {
      this.revision += 1;
      return this.publish(updateRow(this.scope(), this.place(recordedAt), snapshot));
    }

    /** A router-written submission row (the head's revision repeated). */
    async submission(submission: Submission, recordedAt = Date.now()): Promise<number> {
      return this.publish(submissionRow(this.scope(), this.place(recordedAt), submission));
    }

    private scope() {
      return { actorId: OWNER, edgeId, accessId, sessionId: this.sid };
    }

    private place(recordedAt: number) {
      return { epoch: this.epoch, revision: this.revision, recordedAt };
    }

    /** Starts a new epoch (the router lost its head): sequences start over at 1. */
    roll(epoch: string): void {
      this.epoch = epoch;
      this.sequence = 0;
    }

    get head(): number {
      return this.sequence;
    }

    private async publish(message: JournalEntry | JournalSubmissionEntry): Promise<number> {
      this.sequence += 1;
      message.sequence = this.sequence;
      message.prev_stream_seq = this.prev;
      this.prev = await h.publishRaw(this.sid, h.encode(message));
      this.published.push({ message, streamSequence: this.prev });
      return this.prev;
    }

    /** Waits until history applied everything published so far. */
    async applied(): Promise<void> {
      await h.caughtUp(this.prev);
    }
  }

  const scope = (sid: string) => ({ actor_id: OWNER, access_id: accessId, edge_id: edgeId, session_id: sid });
  const page = (sid: string, request: Partial<HistoryJournalPageRequest>) =>
    h.call('historyJournalPage', { ...scope(sid), direction: 'tail', ...request });
  const ok = (reply: HistoryJournalPageReply): JournalPage => {
    if (!reply.ok) throw new Error(`expected a page, got reset ${reply.reset}`);
    return reply.page;
  };
  const reset = (reply: HistoryJournalPageReply): { reason: string; snapshot: JournalSnapshot } => {
    if (reply.ok) throw new Error('expected a reset, got a page');
    return { reason: reply.reset, snapshot: reply.snapshot };
  };
  const ids = (p: { items: { itemId: string }[] }) => p.items.map((item) => item.itemId);
  const user = (text: string) => ({ role: 'user' as const, text });
  const messages = (count: number) => Array.from({ length: count }, (_, i) => user(`m${i + 1}`));
  const pending = (id = clientMessageId(), submittedAt = Date.now()): Submission => ({
    client_message_id: id,
    fence: 3,
    payload_fingerprint: FINGERPRINT,
    dispatch_state: 'pending',
    submitted_at: submittedAt,
  });

  /** Five rows, each adding one message: items m:0:0@1 … m:0:4@5. */
  async function fiveItems(): Promise<Journal> {
    const journal = new Journal();
    for (let n = 1; n <= 5; n += 1) await journal.update({ messages: messages(n) });
    await journal.applied();
    return journal;
  }

  it('tail with limit 2 over 5 items, then before from its nextCursor', async () => {
    const { sid, epoch } = await fiveItems();
    const tail = ok(await page(sid, { limit: 2 }));
    expect(ids(tail)).toEqual(['m:0:3', 'm:0:4']);
    expect(tail).toMatchObject({
      hasOlder: true,
      hasNewer: false,
      window: { nextCursor: { epoch, sequence: 4 } },
      fence: 0,
    });
    const before = ok(await page(sid, { direction: 'before', cursor: tail.window.nextCursor, limit: 2 }));
    expect(ids(before)).toEqual(['m:0:1', 'm:0:2']);
    expect(before).toMatchObject({ hasOlder: true, hasNewer: true });
  });

  it('after from a mid cursor with limit 2: two items, hasNewer, nextCursor beyond the cursor', async () => {
    const { sid, epoch } = await fiveItems();
    const after = ok(await page(sid, { direction: 'after', cursor: { epoch, sequence: 2 }, limit: 2 }));
    expect(ids(after)).toEqual(['m:0:2', 'm:0:3']);
    expect(after).toMatchObject({
      hasNewer: true,
      hasOlder: true,
      window: { nextCursor: { epoch, sequence: 4 } },
    });
  });

  it('clamps the limit inside history: undefined and NaN → 40, 0 and −5 → 1, 10000 → all (≤ 200)', async () => {
    const journal = new Journal();
    for (let n = 1; n <= 45; n += 1) await journal.update({ messages: messages(n) });
    await journal.applied();
    const pages = h.app.get(JournalPagesService);
    const count = async (limit: number | undefined) =>
      ok(
        await pages.page({
          ...scope(journal.sid),
          direction: 'tail',
          ...(limit === undefined ? {} : { limit }),
        }),
      ).items.length;
    expect(await count(undefined)).toBe(40);
    expect(await count(Number.NaN)).toBe(40);
    expect(await count(0)).toBe(1);
    expect(await count(-5)).toBe(1);
    expect(await count(10_000)).toBe(45);
    // The RPC boundary is strict: only history's own callers are clamped.
    await expect(page(journal.sid, { limit: 0 })).rejects.toThrow();
  });

  it('lists a tombstone after the cursor as a removed id, with no items', async () => {
    const journal = new Journal();
    await journal.update({ messages: messages(1), activities: [{ id: 'c1', kind: 'command' }] });
    await journal.update({ messages: messages(1), activities: [] });
    await journal.applied();
    const after = ok(
      await page(journal.sid, { direction: 'after', cursor: { epoch: journal.epoch, sequence: 1 } }),
    );
    expect(after.items).toEqual([]);
    expect(after.removedItemIds).toEqual(['a:0:c1']);
  });

  it('publishes a revised item at revision 2 with its new body, the cursor at the head (state, not delta)', async () => {
    const journal = new Journal();
    await journal.update({ messages: [user('first'), user('draft')] });
    await journal.update({ messages: [user('first'), user('draft'), user('third')] });
    await journal.update({ messages: [user('first'), user('final'), user('third')] });
    await journal.applied();
    const after = ok(
      await page(journal.sid, { direction: 'after', cursor: { epoch: journal.epoch, sequence: 2 } }),
    );
    expect(after.items).toEqual([
      expect.objectContaining({
        itemId: 'm:0:1',
        revision: 2,
        sequence: 1,
        body: { type: 'message', ...user('final') },
      }),
    ]);
    expect(after.window.nextCursor).toEqual({ epoch: journal.epoch, sequence: 3 });
    expect(after.hasNewer).toBe(false);
  });

  it('answers epoch_changed to before and after after an epoch roll, cursor_ahead above the head', async () => {
    const journal = await fiveItems();
    const stale = { epoch: journal.epoch, sequence: 3 };
    journal.roll('e2');
    await journal.update({ messages: messages(1) });
    await journal.applied();
    for (const direction of ['before', 'after'] as const) {
      const answer = reset(await page(journal.sid, { direction, cursor: stale }));
      expect(answer.reason).toBe('epoch_changed');
      expect(answer.snapshot.cursor).toEqual({ epoch: 'e2', sequence: 1 });
      expect(ids(answer.snapshot)).toEqual(['m:0:0']);
    }
    for (const direction of ['before', 'after'] as const) {
      expect(reset(await page(journal.sid, { direction, cursor: { epoch: 'e2', sequence: 2 } })).reason).toBe(
        'cursor_ahead',
      );
    }
    expect(reset(await page(journal.sid, { direction: 'after' })).reason).toBe('cursor_ahead');
  });

  it('carries a message’s submission on its pages: pending, then settled, with a receipt', async () => {
    const journal = new Journal();
    await journal.update({ messages: [user('earlier')] });
    const submission = pending();
    await journal.submission(submission);
    await journal.applied();

    const tail = ok(await page(journal.sid, {}));
    // The submission row's fence is the journal's highest: pages hand it to the next writer.
    expect(tail.fence).toBe(3);
    expect(tail.submissions).toEqual([
      {
        clientMessageId: submission.client_message_id,
        fence: 3,
        payloadFingerprint: FINGERPRINT,
        dispatchState: 'pending',
        reason: null,
        itemId: null,
        sequence: 2,
        submittedAt: submission.submitted_at,
        resolvedAt: null,
      },
    ]);
    const afterPending = ok(
      await page(journal.sid, { direction: 'after', cursor: { epoch: journal.epoch, sequence: 1 } }),
    );
    expect(afterPending.items).toEqual([]);
    expect(afterPending.submissions.map((s) => s.dispatchState)).toEqual(['pending']);
    expect(afterPending.window.nextCursor).toEqual({ epoch: journal.epoch, sequence: 2 });

    // The edge took it: the echo is the next update, then the router's settlement row.
    await journal.update({ messages: [user('earlier'), user('sent')] });
    const acceptedAt = Date.now();
    await journal.submission({
      ...submission,
      dispatch_state: 'accepted',
      item_id: 'm:0:1',
      resolved_at: acceptedAt,
    });
    // A late `unknown` (a restart that did not see the ack) can never reopen the answer, and a
    // settlement of a submission history never saw is ignored; both rows still move the chain.
    await journal.submission({
      ...submission,
      dispatch_state: 'unknown',
      reason: 'restart',
      resolved_at: acceptedAt + 1,
    });
    await journal.submission({
      ...pending(),
      dispatch_state: 'rejected',
      reason: 'busy',
      resolved_at: acceptedAt,
    });
    await journal.update({ messages: [user('earlier'), user('sent'), user('reply')] });
    await journal.applied();

    const settled = {
      clientMessageId: submission.client_message_id,
      dispatchState: 'accepted',
      itemId: 'm:0:1',
      sequence: 2,
      resolvedAt: acceptedAt,
    };
    // An `after` page shows the submissions its rows wrote, at their current state.
    const replay = ok(
      await page(journal.sid, { direction: 'after', cursor: { epoch: journal.epoch, sequence: 1 } }),
    );
    expect(replay.submissions).toEqual([expect.objectContaining(settled)]);
    expect(ids(replay)).toEqual(['m:0:1', 'm:0:2']);
    expect(replay.window.nextCursor).toEqual({ epoch: journal.epoch, sequence: 7 });
    const later = ok(
      await page(journal.sid, { direction: 'after', cursor: { epoch: journal.epoch, sequence: 6 } }),
    );
    expect(later.submissions).toEqual([]);
    expect(ok(await page(journal.sid, {})).submissions).toEqual([expect.objectContaining(settled)]);
    expect(reset(await page(journal.sid, { direction: 'after' })).snapshot.fence).toBe(3);
    expect(reset(await page(journal.sid, { direction: 'after' })).snapshot.submissions).toEqual([
      expect.objectContaining(settled),
    ]);
    const receipts = await h.db.query(
      'SELECT client_message_id, item_id, epoch, sequence::int AS sequence FROM journal_receipts WHERE session_id = $1',
      [journal.sid],
    );
    expect(receipts.rows).toEqual([
      {
        client_message_id: submission.client_message_id,
        item_id: 'm:0:1',
        epoch: journal.epoch,
        sequence: 4,
      },
    ]);
    // The settlement of the unknown submission left no trace but its journal row.
    const stored = await h.db.query(
      'SELECT count(*)::int AS n FROM journal_submissions WHERE session_id = $1',
      [journal.sid],
    );
    expect(stored.rows[0]).toEqual({ n: 1 });
  });

  it('pages tail/before with submissions split by the page’s rows', async () => {
    const journal = new Journal();
    const first = pending();
    await journal.update({ messages: messages(1) });
    await journal.submission(first); // row 2
    await journal.update({ messages: messages(2) }); // row 3 creates m:0:1
    const second = pending();
    await journal.submission(second); // row 4
    await journal.update({ messages: messages(3) }); // row 5 creates m:0:2
    await journal.applied();
    const tail = ok(await page(journal.sid, { limit: 1 }));
    expect(ids(tail)).toEqual(['m:0:2']);
    expect(tail.submissions).toEqual([]);
    const middle = ok(
      await page(journal.sid, { direction: 'before', cursor: tail.window.nextCursor, limit: 1 }),
    );
    expect(ids(middle)).toEqual(['m:0:1']);
    expect(middle.submissions.map((s) => s.clientMessageId)).toEqual([second.client_message_id]);
    const oldest = ok(
      await page(journal.sid, { direction: 'before', cursor: middle.window.nextCursor, limit: 1 }),
    );
    expect(ids(oldest)).toEqual(['m:0:0']);
    expect(oldest.submissions.map((s) => s.clientMessageId)).toEqual([first.client_message_id]);
  });

  it('keeps every page under the byte budget and reaches all 20 large messages both ways', async () => {
    // Scaled to Tether's bounds (256 KiB of items per page, 64 KiB per item): each message is
    // just under the item bound, one per display window (an archived round stays an item).
    const big = (n: number) => user(`${n}:`.padEnd(60 * 1024, 'x'));
    const journal = new Journal();
    for (let n = 0; n < 20; n += 1) await journal.update({ window: n, messages: [big(n)] });
    await journal.applied();
    const expected = Array.from({ length: 20 }, (_, n) => `m:${n}:0`);
    const bytes = (p: JournalPage) =>
      p.items.reduce((sum, item) => sum + Buffer.byteLength(JSON.stringify(item)), 0);

    const backward: string[] = [];
    let current = ok(await page(journal.sid, { limit: 200 }));
    for (;;) {
      expect(bytes(current)).toBeLessThanOrEqual(Limits.JOURNAL_PAGE_MAX_BYTES);
      expect(current.items.every((item) => item.body !== undefined)).toBe(true);
      backward.unshift(...ids(current));
      if (!current.hasOlder) break;
      current = ok(
        await page(journal.sid, { direction: 'before', cursor: current.window.nextCursor, limit: 200 }),
      );
    }
    expect(backward).toEqual(expected);

    const forward: string[] = [];
    let cursor = { epoch: journal.epoch, sequence: 0 };
    for (;;) {
      const next = ok(await page(journal.sid, { direction: 'after', cursor, limit: 200 }));
      expect(bytes(next)).toBeLessThanOrEqual(Limits.JOURNAL_PAGE_MAX_BYTES);
      expect(next.items.length).toBeGreaterThan(0);
      forward.push(...ids(next));
      cursor = next.window.nextCursor;
      if (!next.hasNewer) break;
    }
    expect(forward).toEqual(expected);
  });

  it('deletes a session’s submissions and receipts with it', async () => {
    const journal = new Journal();
    await journal.update({ messages: messages(1) });
    const submission = pending();
    await journal.submission(submission);
    await journal.submission({ ...submission, dispatch_state: 'accepted', resolved_at: Date.now() });
    await journal.applied();
    const count = async (table: string) =>
      (
        await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE session_id = $1`, [
          journal.sid,
        ])
      ).rows[0]!.n;
    expect([await count('journal_submissions'), await count('journal_receipts')]).toEqual([1, 1]);
    await h.call('historyDelete', scope(journal.sid));
    expect([await count('journal_submissions'), await count('journal_receipts')]).toEqual([0, 0]);
  });

  describe('compaction', () => {
    const POLICY = { minTailRows: 4, retainTailMs: 2 * HOUR };

    /**
     * Rows 1–10 recorded three hours ago (a submission at 3, accepted at 4), rows 11–12 now. The
     * policy keeps the larger of the last 4 rows (9–12) and the recent ones (11–12): floor 9.
     */
    async function compactable(): Promise<{ journal: Journal; submission: Submission }> {
      const journal = new Journal();
      const old = Date.now() - 3 * HOUR;
      const submission = pending(clientMessageId(), old);
      await journal.update({ messages: messages(1) }, old);
      await journal.update({ messages: messages(2) }, old);
      await journal.submission(submission, old);
      await journal.submission(
        { ...submission, dispatch_state: 'accepted', item_id: 'm:0:2', resolved_at: old },
        old,
      );
      for (let n = 3; n <= 8; n += 1) await journal.update({ messages: messages(n) }, old);
      await journal.update({ messages: messages(9) });
      await journal.update({ messages: messages(10) });
      await journal.applied();
      return { journal, submission };
    }

    const rowCount = async (sid: string) =>
      (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM journal WHERE session_id = $1', [sid]))
        .rows[0]!.n;

    it('drops rows below the floor; after below it is cursor_compacted, tail and before still work', async () => {
      const { journal, submission } = await compactable();
      const { sid, epoch } = journal;
      const snapshotBefore = reset(await page(sid, { direction: 'after' })).snapshot;
      const compactor = h.app.get(JournalCompactor);
      // The reference policy (512 rows, 2 h) keeps all twelve rows.
      await compactor.runOnce();
      expect(await rowCount(sid)).toBe(12);

      const run = await compactor.runOnce(Date.now(), POLICY);
      expect(run.compacted).toBeGreaterThanOrEqual(1);
      expect(await rowCount(sid)).toBe(4);
      const state = await h.db.query(
        'SELECT oldest_sequence::int AS oldest FROM journal_states WHERE session_id = $1',
        [sid],
      );
      expect(state.rows[0]).toEqual({ oldest: 9 });

      expect(reset(await page(sid, { direction: 'after', cursor: { epoch, sequence: 7 } })).reason).toBe(
        'cursor_compacted',
      );
      const onFloor = ok(await page(sid, { direction: 'after', cursor: { epoch, sequence: 8 } }));
      expect(ids(onFloor)).toEqual(['m:0:6', 'm:0:7', 'm:0:8', 'm:0:9']);
      expect(onFloor.window.nextCursor).toEqual({ epoch, sequence: 12 });

      // tail and before read the reduced state: every item, the compacted rows' ones included.
      const tail = ok(await page(sid, { limit: 200 }));
      expect(ids(tail)).toEqual(Array.from({ length: 10 }, (_, i) => `m:0:${i}`));
      const before = ok(await page(sid, { direction: 'before', cursor: { epoch, sequence: 5 } }));
      expect(ids(before)).toEqual(['m:0:0', 'm:0:1']);
      expect(before.submissions).toEqual([
        expect.objectContaining({ clientMessageId: submission.client_message_id, dispatchState: 'accepted' }),
      ]);
      // The receipt and the submission outlive the rows that wrote them.
      const receipts = await h.db.query(
        'SELECT sequence::int AS sequence FROM journal_receipts WHERE session_id = $1',
        [sid],
      );
      expect(receipts.rows).toEqual([{ sequence: 4 }]);
      expect(reset(await page(sid, { direction: 'after' })).snapshot).toEqual(snapshotBefore);

      // Compacting again keeps everything (4 rows are under the trigger).
      await compactor.runOnce(Date.now(), POLICY);
      expect(await rowCount(sid)).toBe(4);
    });

    it('replaying the same rows again changes nothing, compacted ones included', async () => {
      const { journal } = await compactable();
      const { sid } = journal;
      await h.app.get(JournalCompactor).runOnce(Date.now(), POLICY);
      const snapshot = reset(await page(sid, { direction: 'after' })).snapshot;
      const tail = ok(await page(sid, { limit: 200 }));
      // Redeliveries, as JetStream makes them after a crash before the ack (same stream sequence).
      const service = h.app.get(JournalService);
      for (const { message, streamSequence } of journal.published) {
        expect(await service.persist(message, { streamSequence, force: false })).toBe('unchanged');
        expect(await service.persist(message, { streamSequence, force: true })).toBe('unchanged');
      }
      expect(await rowCount(sid)).toBe(4);
      expect(reset(await page(sid, { direction: 'after' })).snapshot).toEqual(snapshot);
      expect(ok(await page(sid, { limit: 200 }))).toEqual(tail);
    });

    it('skips a session another writer holds, and compacts it on a later run', async () => {
      const { journal } = await compactable();
      const compactor = h.app.get(JournalCompactor);
      await h.db.query('BEGIN');
      try {
        await h.db.query('SELECT 1 FROM journal_states WHERE session_id = $1 FOR UPDATE', [journal.sid]);
        const run = await compactor.runOnce(Date.now(), POLICY);
        expect(run.busy).toBeGreaterThanOrEqual(1);
        expect(await rowCount(journal.sid)).toBe(12);
      } finally {
        await h.db.query('ROLLBACK');
      }
      await compactor.runOnce(Date.now(), POLICY);
      expect(await rowCount(journal.sid)).toBe(4);
    });
  });
});
