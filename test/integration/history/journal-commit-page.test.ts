// The page a commit notice carries (journal-commit-page.ts) stands in for a read: an SSE stream
// at the previous head applies it instead of asking history. These cases pin that it is, byte
// for byte, the `after` page history answers from that head right after the commit, over a
// scripted session that creates, edits, tombstones and revives items, settles a submission,
// crosses the item bound, opens a window and rolls its epoch; that a commit that cannot cut one
// (a roll, a page over the byte budget) carries none; and that the consumer publishes it on the
// notice with the session's scope.
import { jest } from '@jest/globals';
import type {
  Activity,
  EdgeAgentResult,
  HistoryJournalPageReply,
  JournalMessage,
  JournalNotice,
  Submission,
} from '#contracts';
import { decodeJson } from '#messaging';
import type { CommitPage } from '../../../apps/history/src/journal/journal-commit-page.js';
import { JournalService } from '../../../apps/history/src/journal/journal.service.js';
import {
  assistant,
  HARNESS_TIMEOUT_MS,
  JournalChain,
  SLOW_TEST_TIMEOUT_MS,
  startHarness,
  user,
  type HistoryHarness,
  type JournalStep,
} from '../../support/journal-script.js';

jest.setTimeout(SLOW_TEST_TIMEOUT_MS * 2);

const OWNER = 'commit-page-owner';
const update = (
  messages: { role: 'user' | 'assistant'; text: string }[],
  more: Partial<EdgeAgentResult> = {},
) => ({
  kind: 'update' as const,
  snapshot: { messages, ...more },
});
const command: Activity = { id: 'run-1', kind: 'command', status: 'running', command: 'ls' };
const pending: Submission = {
  client_message_id: `${Date.now()}-${'2'.padStart(32, '0')}`,
  fence: 3,
  payload_fingerprint: 'c'.repeat(64),
  dispatch_state: 'pending',
  submitted_at: 1_700_000_000_000,
};
/** Over the 64 KiB item bound in bytes (not in characters): a stand-in on the wire. */
const OVERSIZE = 'é'.repeat(40 * 1024);
/** Under the item bound, but five of them are over the 256 KiB page budget. */
const large = (n: number) => `${n}`.padEnd(60 * 1024, 'l');

/** The session, one committed batch per entry; `page: false` where the commit can cut none. */
const BATCHES: { steps: JournalStep[]; page: boolean }[] = [
  { steps: [update([user('u1')])], page: true },
  // Two items created by one row (a message and an activity), the message edited by the next.
  {
    steps: [
      update([user('u1'), assistant('a1')], { activities: [command] }),
      update([user('u1'), assistant('a1 edited')], { activities: [command] }),
    ],
    page: true,
  },
  // A stored item edited, another tombstoned, the activity finished.
  {
    steps: [
      update([user('u1'), assistant('x')], { activities: [{ ...command, status: 'done', exit_code: 0 }] }),
    ],
    page: true,
  },
  { steps: [{ kind: 'submission', submission: pending }], page: true },
  // The settlement updates a stored submission; the tombstoned id comes back at a new position.
  {
    steps: [
      update([user('u1'), assistant('x'), user('u3')]),
      {
        kind: 'submission',
        submission: {
          ...pending,
          dispatch_state: 'accepted',
          item_id: 'm:0:2',
          resolved_at: 1_700_000_001_000,
        },
      },
    ],
    page: true,
  },
  { steps: [update([user('u1')])], page: true },
  { steps: [update([user('u1'), assistant('back again')])], page: true },
  { steps: [update([user('u1'), assistant(OVERSIZE)])], page: true },
  { steps: [update([user('w1')], { window: 1 })], page: true },
  {
    steps: [update([user('w1'), ...[1, 2, 3, 4, 5].map((n) => assistant(large(n)))], { window: 1 })],
    page: false,
  },
  { steps: [update([user('w1'), assistant('short')], { window: 1 })], page: true },
  { steps: [{ kind: 'roll', epoch: 'e2' }, update([user('z1')])], page: false },
  { steps: [update([user('z1'), assistant('z2')]), update([user('z1')])], page: true },
];

describe('history: the page a commit leaves for the next reader', () => {
  let h: HistoryHarness;
  let service: JournalService;
  let scope: { actorId: string; edgeId: string; accessId: string };

  beforeAll(async () => {
    h = await startHarness('jcommit');
    service = h.app.get(JournalService);
    const { edgeId, accessId } = await h.enroll(OWNER);
    scope = { actorId: OWNER, edgeId, accessId };
  }, HARNESS_TIMEOUT_MS);
  afterAll(() => h.close(), HARNESS_TIMEOUT_MS);

  /** What history answers a reader at the page's start, as the api would ask. */
  function readFrom(sessionId: string, epoch: string, from: number): Promise<HistoryJournalPageReply> {
    return h.call('historyJournalPage', {
      actor_id: scope.actorId,
      access_id: scope.accessId,
      edge_id: scope.edgeId,
      session_id: sessionId,
      direction: 'after',
      cursor: { epoch, sequence: from },
      limit: 200,
    });
  }

  it('cuts, for every batch of a scripted session, exactly the page a read from the previous head answers', async () => {
    const chain = new JournalChain(
      scope,
      BATCHES.flatMap((batch) => batch.steps),
    );
    let streamSequence = 0;
    let head = 0;
    for (const [index, batch] of BATCHES.entries()) {
      const entries: { message: JournalMessage; delivery: { streamSequence: number; force: false } }[] = [];
      for (const _ of batch.steps.filter((step) => step.kind !== 'roll')) {
        const message = chain.next()!;
        message.prev_stream_seq = streamSequence;
        streamSequence += 1;
        entries.push({ message, delivery: { streamSequence, force: false } });
      }
      const { outcomes, pages } = await service.persistBatch(entries);
      expect(outcomes).toEqual(entries.map(() => 'saved'));
      const last = entries[entries.length - 1]!.message.sequence!;
      if (!batch.page) {
        expect([index, pages]).toEqual([index, []]);
        head = last;
        continue;
      }
      expect(pages).toHaveLength(1);
      const page = pages[0]!;
      expect([index, Number(page.from), page.page.window.nextCursor.sequence]).toEqual([index, head, last]);
      // Byte for byte: the same JSON, key order included, as the read a stream would have made.
      const read = await readFrom(chain.sid, page.page.epoch, head);
      expect(JSON.stringify(read)).toBe(JSON.stringify({ ok: true, page: page.page }));
      head = last;
    }
  });

  it('shows the item over the item bound as a stand-in, and settles the submission in place', async () => {
    const chain = new JournalChain(
      scope,
      BATCHES.slice(0, 8).flatMap((batch) => batch.steps),
    );
    const pages: CommitPage[] = [];
    let streamSequence = 0;
    for (let message = chain.next(); message; message = chain.next()) {
      message.prev_stream_seq = streamSequence;
      streamSequence += 1;
      pages.push(
        ...(await service.persistBatch([{ message, delivery: { streamSequence, force: false } }])).pages,
      );
    }
    const settled = pages.find((page) =>
      page.page.submissions.some((view) => view.dispatchState === 'accepted'),
    );
    expect(settled?.page.submissions).toEqual([
      expect.objectContaining({
        clientMessageId: pending.client_message_id,
        dispatchState: 'accepted',
        itemId: 'm:0:2',
        // Where the pending row created it, not the settlement's row.
        sequence: 5,
        submittedAt: pending.submitted_at,
        resolvedAt: 1_700_000_001_000,
      }),
    ]);
    const oversize = pages.at(-1)!.page.items.find((item) => item.itemId === 'm:0:1');
    // Revived by row 9 (its creation moved there), then edited past the bound by row 10.
    expect(oversize).toEqual({
      itemId: 'm:0:1',
      revision: 6,
      sequence: 9,
      observedAt: 1_009,
      oversize: true,
    });
  });

  it('publishes the page on the commit notice with the scope of the session it belongs to', async () => {
    const chain = new JournalChain(
      scope,
      BATCHES.slice(0, 3).flatMap((batch) => batch.steps),
      h,
    );
    const notices: JournalNotice[] = [];
    const subscription = h.nc.subscribe(h.subjects.sessionJournalNotice(chain.sid), {
      callback: (_error, msg) => {
        notices.push(decodeJson<JournalNotice>(msg.data, msg.subject));
      },
    });
    try {
      let last = 0;
      for (let seq = await chain.publishNext(); seq !== null; seq = await chain.publishNext()) last = seq;
      await h.caughtUp(last);
      const deadline = Date.now() + SLOW_TEST_TIMEOUT_MS;
      while (notices.at(-1)?.head !== 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    } finally {
      subscription.unsubscribe();
    }
    // The last commit's page is what a reader at its start reads now (nothing was written since).
    const last = notices.at(-1)!;
    expect(last).toMatchObject({ epoch: 'e1', head: 4 });
    const committed = last.committed!;
    expect(committed).toMatchObject({ actor_id: OWNER, access_id: scope.accessId, edge_id: scope.edgeId });
    expect(committed.page.window.nextCursor).toEqual({ epoch: 'e1', sequence: 4 });
    const read = await readFrom(chain.sid, 'e1', committed.from);
    expect(JSON.stringify(read)).toBe(JSON.stringify({ ok: true, page: committed.page }));
  });
});
