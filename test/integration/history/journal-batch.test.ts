// The journal consumer's batched ingest: messages that arrive together are grouped by session
// and each session's rows are written in one transaction. These cases pin that batching changes
// nothing a row-by-row fold would store (items, journal rows, head, session row), that a batch
// mixing sessions applies each in its own chain order, that an unstorable message or a row whose
// predecessor never applies holds back only itself, that a row held by a dead replica is read
// back from the stream instead of waited for, and that a redelivery of everything changes
// nothing. A backlog is built by stopping the consumer, publishing, and starting it again.
import { jest } from '@jest/globals';
import { jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import type { JournalMessage, Submission } from '#contracts';
import { Aad, HistoryCipher } from '../../../apps/history/src/common/history-cipher.js';
import { JournalConsumer } from '../../../apps/history/src/journal/journal.consumer.js';
import { JournalService } from '../../../apps/history/src/journal/journal.service.js';
import {
  HARNESS_TIMEOUT_MS,
  HISTORY_KEY,
  SLOW_TEST_TIMEOUT_MS,
  startHarness,
  type HistoryHarness,
} from '../../support/history.js';
import { assistant, JournalChain, user, type JournalStep } from '../../support/journal-script.js';

jest.setTimeout(SLOW_TEST_TIMEOUT_MS * 2);

const OWNER = 'batch-owner';
const FINGERPRINT = 'b'.repeat(64);

const pending: Submission = {
  client_message_id: `${Date.now()}-${'1'.padStart(32, '0')}`,
  fence: 2,
  payload_fingerprint: FINGERPRINT,
  dispatch_state: 'pending',
  submitted_at: 1_700_000_000_000,
};

/** Edits, a tombstone, a revived id, a submission settled with a receipt, a new window, a roll. */
const SCRIPT: JournalStep[] = [
  { kind: 'update', snapshot: { messages: [user('u1')] } },
  { kind: 'update', snapshot: { messages: [user('u1'), assistant('a1')] } },
  { kind: 'update', snapshot: { messages: [user('u1'), assistant('a1 edited')] } },
  { kind: 'update', snapshot: { messages: [user('u1'), assistant('a1 edited'), user('u2')] } },
  { kind: 'update', snapshot: { messages: [user('u1'), assistant('x')] } },
  { kind: 'submission', submission: pending },
  { kind: 'update', snapshot: { messages: [user('u1'), assistant('x'), user('u3')] } },
  {
    kind: 'submission',
    submission: { ...pending, dispatch_state: 'accepted', item_id: 'm:0:2', resolved_at: 1_700_000_001_000 },
  },
  { kind: 'update', snapshot: { window: 1, messages: [user('w1')] } },
  { kind: 'roll', epoch: 'e2' },
  { kind: 'update', snapshot: { messages: [user('z1')] } },
  { kind: 'update', snapshot: { messages: [user('z1'), assistant('z2')] } },
  { kind: 'update', snapshot: { messages: [user('z1')] } },
];

describe('history: batched journal ingest', () => {
  let h: HistoryHarness;
  let consumer: JournalConsumer;
  let service: JournalService;
  const cipher = new HistoryCipher(HISTORY_KEY);
  let edgeId: string;
  let accessId: string;

  beforeAll(async () => {
    h = await startHarness('jbatch');
    consumer = h.app.get(JournalConsumer);
    service = h.app.get(JournalService);
    ({ edgeId, accessId } = await h.enroll(OWNER));
  }, HARNESS_TIMEOUT_MS);
  afterAll(() => h.close(), HARNESS_TIMEOUT_MS);

  /** Runs `publish` with the consumer stopped, so everything it publishes is one backlog. */
  async function backlog(publish: () => Promise<number>): Promise<number> {
    await consumer.onModuleDestroy();
    let last: number;
    try {
      last = await publish();
    } finally {
      await consumer.onApplicationBootstrap();
    }
    return last;
  }

  /** One session's messages as the router writes them, published to this harness. */
  const newChain = (steps: readonly JournalStep[] = SCRIPT) =>
    new JournalChain({ actorId: OWNER, edgeId, accessId }, steps, h);

  /** Everything stored for a session, decrypted and without ids that differ between sessions. */
  async function stored(sid: string) {
    const key = { ownerId: OWNER, accessId, edgeId, sessionId: sid };
    const items = await h.db.query<{
      item_id: string;
      epoch: string;
      revision: number;
      sequence: string;
      ordinal: number;
      deleted: boolean;
      body: Buffer | null;
    }>(
      `SELECT item_id, epoch, revision, sequence::text, ordinal, deleted, body
       FROM journal_items WHERE session_id = $1 ORDER BY item_id`,
      [sid],
    );
    const rows = await h.db.query(
      `SELECT epoch, sequence::text, revision::text, touched, client_message_id
       FROM journal WHERE session_id = $1 ORDER BY epoch, sequence`,
      [sid],
    );
    const state = await h.db.query(
      `SELECT epoch, head_sequence::text, oldest_sequence::text, "window", fence
       FROM journal_states WHERE session_id = $1`,
      [sid],
    );
    const session = await h.db.query<{ revision: string; payload: Buffer }>(
      'SELECT revision::text, payload FROM session_histories WHERE session_id = $1',
      [sid],
    );
    const submissions = await h.db.query(
      `SELECT client_message_id, dispatch_state, item_id, sequence::text
       FROM journal_submissions WHERE session_id = $1`,
      [sid],
    );
    const receipts = await h.db.query(
      'SELECT client_message_id, item_id, epoch, sequence::text FROM journal_receipts WHERE session_id = $1',
      [sid],
    );
    return {
      items: items.rows.map(({ body, ...item }) => ({
        ...item,
        body: body ? cipher.decryptJson(body, Aad.item(key, item.item_id)) : null,
      })),
      rows: rows.rows,
      state: state.rows,
      session: session.rows.map((row) => ({
        revision: row.revision,
        payload: cipher.decryptJson<Record<string, unknown>>(row.payload, Aad.payload(key)),
      })),
      submissions: submissions.rows,
      receipts: receipts.rows,
    };
  }

  /** The session's stored state with the session id blanked, for comparing two sessions. */
  async function comparable(sid: string) {
    const value = await stored(sid);
    return JSON.parse(JSON.stringify(value).replaceAll(sid, '<sid>')) as unknown;
  }

  /** The script folded row by row through the single-message path, as a reference. */
  async function rowByRow(steps: JournalStep[] = SCRIPT): Promise<string> {
    const chain = newChain(steps);
    let streamSequence = 0;
    for (let message = chain.next(); message; message = chain.next()) {
      message.prev_stream_seq = streamSequence;
      streamSequence += 1;
      expect(await service.persist(message, { streamSequence, force: false })).toBe('saved');
    }
    return chain.sid;
  }

  it.each([
    ['up to its new window', SCRIPT.findIndex((step) => step.kind === 'roll')],
    ['across an epoch roll', SCRIPT.length],
  ])(
    'stores one batch of a whole chain %s exactly as the row-by-row fold; a second delivery changes nothing',
    async (_, length) => {
      const steps = SCRIPT.slice(0, length);
      const reference = await rowByRow(steps);
      const chain = newChain(steps);
      const entries: { message: JournalMessage; delivery: { streamSequence: number; force: boolean } }[] = [];
      let streamSequence = 1_000;
      for (let message = chain.next(); message; message = chain.next()) {
        message.prev_stream_seq = entries.length === 0 ? 0 : streamSequence;
        streamSequence += 1;
        entries.push({ message, delivery: { streamSequence, force: false } });
      }

      const first = await service.persistBatch(entries);
      expect(first.outcomes).toEqual(entries.map(() => 'saved'));
      const expected = await comparable(reference);
      expect(await comparable(chain.sid)).toEqual(expected);
      expect(await comparable(chain.sid)).toMatchObject({
        receipts: [expect.objectContaining({ item_id: 'm:0:2' })],
      });

      const again = await service.persistBatch(entries);
      expect(again.outcomes).toEqual(entries.map(() => 'unchanged'));
      // Nothing was applied the second time: no commit, no page.
      expect(again.pages).toEqual([]);
      expect(await comparable(chain.sid)).toEqual(expected);
    },
  );

  it.each([
    ['one session after the other', false],
    ['interleaved row by row', true],
  ])(
    'stores the rows of several sessions given together (%s) exactly as the row-by-row fold; a second delivery changes nothing',
    async (_, interleave) => {
      const reference = await rowByRow();
      const chains = [newChain(), newChain(), newChain()];
      type Entry = { message: JournalMessage; delivery: { streamSequence: number; force: boolean } };
      const perChain: Entry[][] = chains.map(() => []);
      let streamSequence = 5_000;
      // Stream sequences interleave across the sessions, as on the real stream.
      for (let more = true; more;) {
        more = false;
        chains.forEach((chain, index) => {
          const message = chain.next();
          if (!message) return;
          more = true;
          const own = perChain[index]!;
          message.prev_stream_seq = own.at(-1)?.delivery.streamSequence ?? 0;
          streamSequence += 1;
          own.push({ message, delivery: { streamSequence, force: false } });
        });
      }
      const ordered = interleave
        ? Array.from({ length: Math.max(...perChain.map((own) => own.length)) }, (_, step) =>
            perChain.flatMap((own) => (own[step] ? [own[step]] : [])),
          ).flat()
        : perChain.flat();

      expect((await service.persistBatch(ordered)).outcomes).toEqual(ordered.map(() => 'saved'));
      const expected = await comparable(reference);
      for (const chain of chains) expect(await comparable(chain.sid)).toEqual(expected);

      expect((await service.persistBatch(ordered)).outcomes).toEqual(ordered.map(() => 'unchanged'));
      for (const chain of chains) expect(await comparable(chain.sid)).toEqual(expected);
    },
  );

  it('stores the sessions given together on their own terms: a gone access stores nothing, the others apply', async () => {
    const steps = SCRIPT.slice(0, 3);
    const reference = await rowByRow(steps);
    const healthy = newChain(steps);
    const orphan = newChain(steps);
    const entries: { message: JournalMessage; delivery: { streamSequence: number; force: boolean } }[] = [];
    let streamSequence = 9_000;
    for (const [chain, access] of [
      [orphan, 'f'.repeat(32)],
      [healthy, accessId],
    ] as const) {
      let prev = 0;
      for (let message = chain.next(); message; message = chain.next()) {
        message.access_id = access;
        message.prev_stream_seq = prev;
        streamSequence += 1;
        prev = streamSequence;
        entries.push({ message, delivery: { streamSequence, force: false } });
      }
    }

    expect((await service.persistBatch(entries)).outcomes).toEqual([
      ...steps.map(() => 'no_access'),
      ...steps.map(() => 'saved'),
    ]);
    expect(await comparable(healthy.sid)).toEqual(await comparable(reference));
    expect(await stored(orphan.sid)).toMatchObject({ items: [], rows: [], state: [], session: [] });
  });

  it('stores a batch whose first row waits for its predecessor: only the rows it holds back wait', async () => {
    const chain = newChain();
    const messages: JournalMessage[] = [];
    for (let message = chain.next(); message; message = chain.next()) messages.push(message);
    // Stream sequences 1..n; the batch lacks the first row, as if it were still in flight.
    messages.forEach((message, index) => (message.prev_stream_seq = index));
    const entries = messages.map((message, index) => ({
      message,
      delivery: { streamSequence: index + 1, force: false },
    }));
    const { outcomes: rest } = await service.persistBatch(entries.slice(1));
    // Everything up to the roll chains after the missing row; the roll (sequence 1) opens an epoch.
    const roll = messages.findIndex((message) => message.epoch === 'e2');
    expect(rest).toEqual(entries.slice(1).map((_, index) => (index + 1 < roll ? 'out_of_order' : 'saved')));
    expect((await stored(chain.sid)).state).toEqual([expect.objectContaining({ epoch: 'e2' })]);
  });

  it('applies a backlog that interleaves several sessions, each in its own chain order', async () => {
    const reference = await rowByRow();
    const chains = [newChain(), newChain(), newChain()];
    const last = await backlog(async () => {
      let seq = 0;
      for (let more = true; more;) {
        more = false;
        for (const chain of chains) {
          const published = await chain.publishNext();
          if (published !== null) {
            seq = published;
            more = true;
          }
        }
      }
      return seq;
    });
    await h.caughtUp(last);

    const expected = await comparable(reference);
    for (const chain of chains) expect(await comparable(chain.sid)).toEqual(expected);
  });

  it('terminates an unstorable message and applies the row chained after it as a gap, holding back nothing else', async () => {
    const steps: JournalStep[] = [1, 2, 3].map((n) => ({
      kind: 'update',
      snapshot: { messages: Array.from({ length: n }, (_, i) => user(`m${i}`)) },
    }));
    const broken = newChain(steps);
    const healthy = newChain(steps);
    const last = await backlog(async () => {
      await broken.publishNext();
      await healthy.publishNext();
      // Not JSON at all, on the healthy subject but outside its chain: dropped, blocks nothing.
      await healthy.publishForeign(new TextEncoder().encode('{not json'));
      await broken.publishSpoiled();
      await healthy.publishNext();
      await broken.publishNext();
      return (await healthy.publishNext())!;
    });
    await h.caughtUp(last);

    const good = await stored(healthy.sid);
    expect(good.rows.map((row) => row.sequence)).toEqual(['1', '2', '3']);
    expect(good.items.map((item) => item.item_id)).toEqual(['m:0:0', 'm:0:1', 'm:0:2']);
    // The spoiled row never applies; the one after it finds its predecessor unstorable when it
    // reads it back from the stream, and applies with a gap without waiting for it.
    const gapped = await stored(broken.sid);
    expect(gapped.rows.map((row) => row.sequence)).toEqual(['1', '3']);
    expect(gapped.state).toEqual([expect.objectContaining({ epoch: 'e1', head_sequence: '3' })]);
    expect(gapped.items.map((item) => item.item_id)).toEqual(['m:0:0', 'm:0:1', 'm:0:2']);
  });

  it('stores the rows after one a dead replica holds at once, reading that row from the stream', async () => {
    const chain = newChain([
      { kind: 'update', snapshot: { messages: [user('u1')] } },
      { kind: 'submission', submission: pending },
      {
        kind: 'submission',
        submission: {
          ...pending,
          dispatch_state: 'accepted',
          item_id: 'm:0:0',
          resolved_at: 1_700_000_001_000,
        },
      },
      { kind: 'update', snapshot: { messages: [user('u1'), assistant('a1')] } },
    ]);
    await h.caughtUp((await chain.publishNext())!);
    const { stream, durable } = {
      stream: h.subjects.sessionsStream,
      durable: h.subjects.historyJournalConsumer,
    };
    await consumer.onModuleDestroy();
    let last: number;
    let held: JsMsg | null;
    try {
      const pendingSeq = (await chain.publishNext())!;
      await chain.publishNext();
      last = (await chain.publishNext())!;
      // Another replica pulls the pending row and dies before acking it: JetStream would hand
      // it out again only after the ack wait (30 s).
      held = await (await jetstream(h.nc).consumers.get(stream, durable)).next({ expires: 5_000 });
      expect(held?.seq).toBe(pendingSeq);
    } finally {
      await consumer.onApplicationBootstrap();
    }
    const jsm = await jetstreamManager(h.nc);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const info = await jsm.consumers.info(stream, durable);
      // Everything after the held row is acked: only the dead replica's row is outstanding.
      if (info.delivered.stream_seq >= last && info.num_ack_pending === 1) break;
      if (Date.now() > deadline) throw new Error(`consumer never settled: ${JSON.stringify(info)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const state = await stored(chain.sid);
    expect(state.rows.map((row) => row.sequence)).toEqual(['1', '2', '3', '4']);
    expect(state.submissions).toEqual([
      expect.objectContaining({ client_message_id: pending.client_message_id, dispatch_state: 'accepted' }),
    ]);
    expect(state.receipts).toEqual([
      expect.objectContaining({ client_message_id: pending.client_message_id }),
    ]);

    // The held row comes back at last and changes nothing.
    held!.nak();
    await h.caughtUp(last);
    expect(await stored(chain.sid)).toEqual(state);
  });

  it('changes nothing when the whole stream is delivered again', async () => {
    const chain = newChain();
    let last = 0;
    for (let seq = await chain.publishNext(); seq !== null; seq = await chain.publishNext()) last = seq;
    await h.caughtUp(last);
    const before = await stored(chain.sid);
    const rowCount = await h.db.query<{ n: string }>('SELECT count(*)::text AS n FROM journal');

    // A new durable consumer starts from the stream's first message: every message comes again.
    const jsm = await jetstreamManager(h.nc);
    await backlog(async () => {
      await jsm.consumers.delete(h.subjects.sessionsStream, h.subjects.historyJournalConsumer);
      return last;
    });
    await h.caughtUp(last);

    expect(await stored(chain.sid)).toEqual(before);
    expect(await h.db.query('SELECT count(*)::text AS n FROM journal')).toMatchObject({
      rows: rowCount.rows,
    });
  });
});
