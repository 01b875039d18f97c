// Invariants 1–3 of docs/architecture.md on the real chain: several router replicas sequence one
// session's journal with no gap and no reuse; a Redis that loses everything (FLUSHALL on a
// private redis-server, never the shared one) is re-seeded from the stream so the epoch continues,
// and when the stream cannot tell, the epoch rolls; history folds every row into the reduced
// state (render items with revisions and tombstones) in the subject's order.
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Redis } from 'ioredis';
import {
  sealedJournalEntrySchema,
  type EdgeAgentResult,
  type JournalEntry,
  type SessionUpdate,
} from '#contracts';
import { decodeJson } from '#messaging';
import { freePort, testJournalCipher } from '#test-support';
import {
  HARNESS_TIMEOUT_MS,
  sessionId,
  useJournalStack,
  type HistoryHarness,
} from '../../support/journal.js';
import { expectContiguousJournal } from '../../support/journal-chain.js';
import { PrivateRedis } from '../../support/private-servers.js';

const OWNER = 'journal-owner';
const REPLICAS = 3;

// The routers' private Redis starts before the stack and stops after it: file-level hooks run in
// the order they are declared, the stack's in between.
let redis: PrivateRedis;
beforeAll(async () => {
  redis = new PrivateRedis(await freePort());
  await redis.start();
}, HARNESS_TIMEOUT_MS);
const chain = useJournalStack('jseq', OWNER, () => ({ replicas: REPLICAS, redisUrl: redis.url }));
afterAll(() => redis?.close(), HARNESS_TIMEOUT_MS);

describe('journal sequencer', () => {
  let h: HistoryHarness;
  let admin: Redis;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    admin = new Redis(redis.url);
    h = chain.stack.h;
    jsm = await jetstreamManager(h.nc);
  }, HARNESS_TIMEOUT_MS);

  afterAll(async () => {
    await admin?.quit().catch(() => undefined);
  }, HARNESS_TIMEOUT_MS);

  const update = (sid: string, revision: number, snapshot: Partial<EdgeAgentResult> = {}): SessionUpdate =>
    chain.stack.update(sid, revision, snapshot);
  const send = (u: SessionUpdate) => chain.stack.send(u);

  const cipher = testJournalCipher();
  /** Every journal message of a session, in stream order. */
  async function streamEntries(sid: string): Promise<{ seq: number; entry: JournalEntry }[]> {
    const info = await jsm.streams.info(h.subjects.sessionsStream);
    const out: { seq: number; entry: JournalEntry }[] = [];
    const subject = h.subjects.sessionJournal(sid);
    // The suite's stream is small: walk it and keep this session's messages.
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
      const message = await jsm.streams.getMessage(h.subjects.sessionsStream, { seq }).catch(() => null);
      if (!message || message.subject !== subject) continue;
      out.push({
        seq: message.seq,
        entry: cipher.open(sealedJournalEntrySchema.parse(decodeJson(message.data))) as JournalEntry,
      });
    }
    return out;
  }

  it('sequences racing updates from several replicas with no gap and no reuse', async () => {
    const sid = sessionId();
    // Each revision is sent to every replica at once (an edge retrying across replicas), and
    // revisions overlap with each other.
    const acks = await Promise.all(
      Array.from({ length: 12 }, (_, i) => i + 1).flatMap((revision) =>
        Array.from({ length: REPLICAS }, () =>
          send(update(sid, revision, { messages: [{ role: 'user', text: `m${revision}` }] })),
        ),
      ),
    );
    expect(new Set(acks.map((ack) => ack.epoch)).size).toBe(1);
    const entries = await streamEntries(sid);
    expectContiguousJournal(entries);
    // Each stored row has its own revision: nothing journaled twice.
    const revisions = entries.map(({ entry }) => entry.revision);
    expect(new Set(revisions).size).toBe(revisions.length);
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
  });

  it('continues the epoch with no gap after FLUSHALL, and rolls it when the stream cannot tell', async () => {
    const sid = sessionId();
    const first = await send(update(sid, 1));
    await send(update(sid, 2));
    await admin.flushall();
    const afterFlush = await send(update(sid, 3));
    expect(afterFlush).toMatchObject({ epoch: first.epoch, sequence: 3, duplicate: false });
    // The re-seeded head also remembers the last revision: a retry is still a duplicate.
    await admin.flushall();
    expect(await send(update(sid, 3))).toMatchObject({ epoch: first.epoch, sequence: 3, duplicate: true });
    expectContiguousJournal(await streamEntries(sid));

    // Nothing left to re-seed from (the subject purged, Redis flushed): a new epoch, never a gap.
    await jsm.streams.purge(h.subjects.sessionsStream, { filter: h.subjects.sessionJournal(sid) });
    await admin.flushall();
    const rolled = await send(update(sid, 4));
    expect(rolled.epoch).not.toBe(first.epoch);
    expect(rolled.sequence).toBe(1);
  });

  it('folds rows into render items with revisions and tombstones in history', async () => {
    const sid = sessionId();
    await send(update(sid, 1, { messages: [{ role: 'user', text: 'hi' }] }));
    await send(
      update(sid, 2, {
        messages: [
          { role: 'user', text: 'hi' },
          { role: 'assistant', text: 'wor' },
        ],
        activities: [{ id: 'c1', kind: 'command', status: 'running' }],
      }),
    );
    await send(
      update(sid, 3, {
        messages: [
          { role: 'user', text: 'hi' },
          { role: 'assistant', text: 'working' },
        ],
      }),
    );
    const last = await streamEntries(sid);
    await h.caughtUp(last[last.length - 1]!.seq);
    const items = await h.db.query<{ item_id: string; revision: number; sequence: string; deleted: boolean }>(
      'SELECT item_id, revision, sequence, deleted FROM journal_items WHERE session_id = $1 ORDER BY item_id',
      [sid],
    );
    expect(items.rows).toEqual([
      { item_id: 'a:0:c1', revision: 2, sequence: '2', deleted: true },
      { item_id: 'm:0:0', revision: 1, sequence: '1', deleted: false },
      { item_id: 'm:0:1', revision: 2, sequence: '2', deleted: false },
    ]);
    const state = await h.db.query('SELECT epoch, head_sequence FROM journal_states WHERE session_id = $1', [
      sid,
    ]);
    expect(state.rows).toEqual([{ epoch: last[0]!.entry.epoch, head_sequence: '3' }]);
    const rows = await h.db.query<{ sequence: string; touched: string[] }>(
      'SELECT sequence, touched FROM journal WHERE session_id = $1 ORDER BY sequence',
      [sid],
    );
    expect(rows.rows).toEqual([
      { sequence: '1', touched: ['m:0:0'] },
      { sequence: '2', touched: ['m:0:1', 'a:0:c1'] },
      { sequence: '3', touched: ['m:0:1', 'a:0:c1'] },
    ]);
    // Content is ciphertext at rest.
    const raw = await h.db.query<{ body: Buffer }>(
      `SELECT body FROM journal_items WHERE session_id = $1 AND item_id = 'm:0:1'`,
      [sid],
    );
    expect(raw.rows[0]!.body.toString('latin1')).not.toContain('working');
  });
});
