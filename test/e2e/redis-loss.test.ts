// Two "Done when" items of issue 4 on the real chain, against a private redis-server this suite
// starts and stops (never the shared one other suites use):
// - FLUSHALL mid-session: an SSE client either continues with no gap (the same epoch, rows
//   contiguous) or is told `epoch_changed`, and ends with the state a fresh page shows;
// - the example subscriber (examples/lifecycle-subscriber.ts, compiled), stopped and restarted
//   during traffic, prints every lifecycle event of the stream exactly once.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import {
  lifecycleEventSchema,
  sealedJournalEntrySchema,
  type HistoryJournalPageReply,
  type JournalItem,
  type JournalSnapshot,
  type LifecycleEvent,
  type SealedJournalEntry,
  type Installation,
} from '#contracts';
import { connectNats, decodeJson } from '#messaging';
import {
  freePort,
  signToken,
  testServices,
  TEST_JWT_SECRET,
  type Snapshot,
  waitUntil,
  findInstallation,
  openSession,
} from '#test-support';
import type { Stack } from '../../scripts/stack/launcher.js';
import { startE2eStack, withOutput, type E2eStack } from '../support/e2e-stack.js';
import { PrivateRedis } from '../support/private-servers.js';
import { SseClient } from './sse-client.js';
import { expectContiguousJournal } from '../support/journal-chain.js';

jest.setTimeout(240_000);

/** Generous bound on anything that should follow shortly (a turn, a catch-up, a restart). */
const SETTLE_TIMEOUT_MS = 60_000;
/** The journal head counts as final once it has not moved for this long. */
const HEAD_SETTLE_MS = 750;
const SUBSCRIBER_ENTRY = join(process.cwd(), 'dist/examples/lifecycle-subscriber.js');

let redis: PrivateRedis | undefined;
let admin: Redis;
let e2e: E2eStack;
let stack: Stack;
let nc: NatsConnection;
let jsm: JetStreamManager;
const owner = `rl${Date.now() % 100000}`;
let token: string;
let edgeId: string;
let installation: Installation;

beforeAll(async () => {
  redis = new PrivateRedis(await freePort());
  await redis.start();
  admin = new Redis(redis.url);
  e2e = await startE2eStack({
    label: 'e2eredis',
    owner,
    stack: { redisUrl: redis.url },
    script: {
      rules: [{ steps: [{ type: 'reply', text: 'streamed. '.repeat(30), deltas: 12, delay_ms: 40 }] }],
    },
  });
  stack = e2e.stack;
  token = await signToken(TEST_JWT_SECRET, owner);
  nc = await connectNats({ servers: (await testServices()).natsUrl, name: 'test-e2e-redis-loss' });
  jsm = await jetstreamManager(nc);
  edgeId = stack.edge!.id;
  installation = await findInstallation(e2e.owner, edgeId);
});

afterAll(async () => {
  await jsm?.streams.delete(stack.subjects.sessionsStream).catch(() => undefined);
  await nc?.close();
  await e2e?.close();
  await admin?.quit().catch(() => undefined);
  await redis?.close();
});

/** A new access and a session on it, present in history. */
async function session(name: string) {
  const started = await openSession(e2e.owner, { edgeId, installation, project: e2e.projectDir, name });
  const { accessId, sessionId } = started;
  const query = `edge_id=${edgeId}&access_id=${accessId}`;
  await until(
    async () =>
      (await e2e.owner.call('GET', `/api/v1/sessions/${sessionId}/history?${query}`)).status === 200,
    'the session reaching history',
  );
  const base = { edge_id: edgeId, access_id: accessId, session_id: sessionId };
  let revision = started.revision;
  /** One prompt, answered once the turn finished (retried while the stack recovers from the flush). */
  const turn = async (text: string): Promise<void> => {
    let sent: Snapshot | undefined;
    await until(async () => {
      sent = await e2e.owner.agent<Snapshot>({ ...base, action: 'send', text });
      return sent.status === 'ok';
    }, `the send of "${text}"`);
    await until(async () => {
      const watched = await e2e.owner.agent<Snapshot>({ ...base, action: 'watch', cursor: String(revision) });
      revision = watched.revision ?? revision;
      return watched.status === 'ok' && !watched.running && revision > (sent?.revision ?? 0);
    }, `the turn of "${text}"`);
  };
  return { accessId, sessionId, query, turn };
}

const until = (check: () => Promise<boolean>, what: string) =>
  waitUntil(check, what, { timeoutMs: SETTLE_TIMEOUT_MS });

/** Every message of the suite's stream on `subject`, in stream order (the stream is small). */
async function messagesOn(subject: string): Promise<{ seq: number; data: Uint8Array }[]> {
  const info = await jsm.streams.info(stack.subjects.sessionsStream);
  const out: { seq: number; data: Uint8Array }[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
    const message = await jsm.streams.getMessage(stack.subjects.sessionsStream, { seq }).catch(() => null);
    if (message?.subject === subject) out.push({ seq, data: message.data });
  }
  return out;
}

it('keeps an SSE client gap-free (or tells it epoch_changed) across FLUSHALL mid-session', () =>
  withOutput(stack, async () => {
    const { sessionId, query, turn } = await session('flush');
    const client = await SseClient.open(
      `${stack.apiUrl}/api/v1/sessions/${sessionId}/events?${query}`,
      token,
    );
    expect(client.status).toBe(200);
    await turn('before the flush');
    await admin.flushall();
    await turn('after the flush');
    await admin.flushall();
    await turn('after the second flush');

    // The client at the journal head (re-read until it stops moving), then compared.
    const headOf = async (): Promise<string> => {
      const reply = await e2e.owner.call<HistoryJournalPageReply>(
        'GET',
        `/api/v1/sessions/${sessionId}/history?${query}&direction=after`,
      );
      const data = reply.body.data!;
      if (data.ok) throw new Error('expected the snapshot reset');
      return `${data.snapshot.cursor.epoch}:${data.snapshot.cursor.sequence}`;
    };
    // History stores a turn's last rows a moment after the edge reported it finished: the head
    // is final once it has not moved for a while.
    let settledHead = '';
    await until(async () => {
      const head = await headOf();
      if (client.events.at(-1)?.id !== head) return false;
      await new Promise((resolve) => setTimeout(resolve, HEAD_SETTLE_MS));
      settledHead = await headOf();
      return settledHead === head && client.events.at(-1)?.id === head;
    }, 'the client reaching the settled head');
    expect(settledHead).not.toBe('');
    client.close();

    // What the client saw: every batch continues its cursor in the same epoch; an epoch may only
    // change through a reset that says so.
    const items = new Map<string, JournalItem>();
    let cursor: { epoch: string; sequence: number } | undefined;
    for (const event of client.events) {
      const data = JSON.parse(event.data) as {
        reset?: string;
        snapshot?: JournalSnapshot;
        batch?: {
          cursor: { epoch: string; sequence: number };
          items: JournalItem[];
          removedItemIds: string[];
        };
      };
      if (event.type === 'snapshot') {
        cursor = data.snapshot!.cursor;
        items.clear();
        for (const item of data.snapshot!.items) items.set(item.itemId, item);
      } else if (event.type === 'reset') {
        expect(data.reset).toBe('epoch_changed');
        cursor = data.snapshot!.cursor;
        items.clear();
        for (const item of data.snapshot!.items) items.set(item.itemId, item);
      } else if (event.type === 'batch') {
        expect(data.batch!.cursor.epoch).toBe(cursor?.epoch);
        expect(data.batch!.cursor.sequence).toBeGreaterThan(cursor!.sequence);
        cursor = data.batch!.cursor;
        for (const item of data.batch!.items) items.set(item.itemId, item);
        for (const removed of data.batch!.removedItemIds) items.delete(removed);
      } else {
        throw new Error(`unexpected ${event.type}`);
      }
    }

    // The journal itself: contiguous sequences within each epoch, chained by stream sequence.
    const rows = (await messagesOn(stack.subjects.sessionJournal(sessionId))).map(({ seq, data }) => ({
      seq,
      entry: sealedJournalEntrySchema.parse(decodeJson(data)) as SealedJournalEntry,
    }));
    expectContiguousJournal(rows);

    // The client holds what a fresh reader gets.
    const tail = await e2e.owner.call<HistoryJournalPageReply>(
      'GET',
      `/api/v1/sessions/${sessionId}/history?${query}&limit=200`,
    );
    const page = tail.body.data!;
    if (!page.ok) throw new Error('expected a page');
    const order = (list: JournalItem[]) =>
      [...list].sort((a, b) => a.sequence - b.sequence || a.itemId.localeCompare(b.itemId));
    expect(order([...items.values()])).toEqual(order(page.page.items));
    const prompts = [...items.values()].filter((item) => item.body?.['role'] === 'user');
    expect(prompts).toHaveLength(3);
  }));

it('shows the example subscriber, stopped and restarted during traffic, every event once', () =>
  withOutput(stack, async () => {
    const durable = `example-${Date.now() % 100000}`;
    const lines: string[] = [];
    const run = (): ChildProcess => {
      const child = spawn(process.execPath, [SUBSCRIBER_ENTRY, '--durable', durable], {
        env: {
          ...process.env,
          TETHER_NATS_URL: stack.options.natsUrl,
          TETHER_NAMESPACE: stack.subjects.namespace,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let buffer = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n')) !== -1) {
          lines.push(buffer.slice(0, end));
          buffer = buffer.slice(end + 1);
        }
      });
      return child;
    };
    const following = () => lines.filter((line) => line.startsWith('Following ')).length;
    const stop = async (child: ChildProcess) => {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
    };

    let aId: string | undefined;
    const first = run();
    try {
      await until(() => Promise.resolve(following() === 1), 'the subscriber to start');
      const a = await session('subscriber-a');
      aId = a.sessionId;
      await a.turn('first');
      await stop(first);
    } finally {
      if (first.exitCode === null) first.kill('SIGKILL');
    }
    // Traffic while it is stopped.
    const b = await session('subscriber-b');
    await b.turn('while stopped');
    const second = run();
    try {
      await until(() => Promise.resolve(following() === 2), 'the subscriber to restart');
      await b.turn('after the restart');

      // Every lifecycle event in the stream, printed as the example prints it.
      const expected = async (): Promise<string[]> => {
        const events: LifecycleEvent[] = [];
        const info = await jsm.streams.info(stack.subjects.sessionsStream);
        for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
          const message = await jsm.streams
            .getMessage(stack.subjects.sessionsStream, { seq })
            .catch(() => null);
          if (!message || !message.subject.endsWith('.lifecycle')) continue;
          events.push(lifecycleEventSchema.parse(decodeJson(message.data, message.subject)));
        }
        return events.map((event) =>
          `${new Date(event.at).toISOString()} ${event.session_id} ${event.epoch}#${event.sequence} ${event.type} ${event.data.approval_id ?? event.data.status ?? ''}`.trimEnd(),
        );
      };
      const printed = () => lines.filter((line) => !line.startsWith('Following '));
      let want: string[] = [];
      await until(async () => {
        want = await expected();
        return printed().length >= want.length && want.length > 0;
      }, 'the subscriber to print every event');
      await stop(second);
      const seen = printed();
      // Once each: no line twice, none that is not in the stream, every event up to the check.
      expect(new Set(seen).size).toBe(seen.length);
      const stored = new Set(await expected());
      expect(seen.filter((line) => !stored.has(line))).toEqual([]);
      expect(want.filter((line) => !seen.includes(line))).toEqual([]);
      // Both sessions' events are there: the one before the stop and the one during it.
      for (const sessionId of [aId, b.sessionId]) {
        expect(seen.some((line) => line.split(' ')[1] === sessionId)).toBe(true);
      }
    } finally {
      if (second.exitCode === null) second.kill('SIGKILL');
    }
  }));
