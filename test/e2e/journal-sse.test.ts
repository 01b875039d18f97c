// The live journal over HTTP (issue 4 "Done when"): while the scripted agent streams replies, an
// SSE client that disconnects at random points and resumes from its last event id ends with the
// same item state as a client that never disconnected, and both match a fresh page.
import { jest } from '@jest/globals';
import {
  eventually,
  signToken,
  type ApiClient,
  TEST_JWT_SECRET,
  type Snapshot,
  startSession,
} from '#test-support';
import { connectNats } from '#messaging';
import type { HistoryJournalPageReply, JournalItem } from '#contracts';
import type { Stack } from '../../scripts/stack/launcher.js';
import { startE2eStack, untilInHistory, type E2eStack } from '../support/e2e-stack.js';
import { SseParser } from '../support/sse-parser.js';
import { SseView } from '../support/closed-loop.js';
import { metricValue } from '../integration/telemetry/metrics-endpoints.js';

jest.setTimeout(120_000);

const PROMPTS = 3;
/** Bound on waiting for both clients to reach the journal head after the last turn. */
/** The head counts as final once it has not moved for this long. */
const HEAD_SETTLE_MS = 750;
const CONVERGE_TIMEOUT_MS = 30_000;

function ordered(items: JournalItem[]): JournalItem[] {
  return [...items].sort((a, b) => a.sequence - b.sequence || a.itemId.localeCompare(b.itemId));
}

let e2e: E2eStack;
let stack: Stack;
let projectDir: string;
const owner = `sse${Date.now() % 100000}`;
let token: string;
let alice: ApiClient;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2esse',
    owner,
    // Every turn streams many deltas: many journal rows, each revising the reply item.
    script: {
      rules: [{ steps: [{ type: 'reply', text: 'streamed. '.repeat(30), deltas: 15, delay_ms: 40 }] }],
    },
  });
  ({ stack, projectDir } = e2e);
  token = await signToken(TEST_JWT_SECRET, owner);
  alice = e2e.owner;
});

afterAll(async () => {
  await e2e?.close();
});

/**
 * Reads one SSE connection into `state` until `signal` aborts it or the server closes it. Events
 * are applied only when complete, as a browser's EventSource does.
 */
async function readStream(url: string, state: SseView, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (state.lastEventId !== undefined) headers['last-event-id'] = state.lastEventId;
  let response: Response;
  try {
    response = await fetch(url, { headers, signal });
  } catch {
    return; // aborted before the response
  }
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser((event) => state.apply(event.type, event.id, event.data));
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.push(value);
    }
  } catch {
    // Aborted mid-stream: whatever was complete is applied, the rest is re-read on resume.
  }
}

it('converges a client that disconnects at random points with one that never does', async () => {
  try {
    await scenario();
  } catch (error) {
    // Service output helps only when something failed.
    console.log(stack.output().split('\n').slice(-80).join('\n'));
    throw error;
  }
});

async function scenario(): Promise<void> {
  const edgeId = stack.edge!.id;
  const started = await startSession(alice, edgeId, projectDir, { name: 'sse' });
  const { accessId, sessionId } = started;
  const base = { edge_id: edgeId, access_id: accessId, session_id: sessionId };
  const query = `edge_id=${edgeId}&access_id=${accessId}`;
  const eventsUrl = `${stack.apiUrl}/api/v1/sessions/${sessionId}/events?${query}`;

  // The journal exists in history once the start's first row is stored.
  await untilInHistory(alice, sessionId, query);

  // The steady client: one connection for the whole test.
  const steady = new SseView();
  const steadyAbort = new AbortController();
  const steadyDone = readStream(eventsUrl, steady, steadyAbort.signal);

  // The flaky client: connects, reads for a random while, drops, resumes from its last event id.
  const flaky = new SseView();
  let traffic = true;
  let reconnects = 0;
  const flakyDone = (async () => {
    for (;;) {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), 30 + Math.floor(Math.random() * 300));
      await readStream(eventsUrl, flaky, abort.signal);
      clearTimeout(timer);
      reconnects += 1;
      if (!traffic) return;
    }
  })();

  let revision = started.revision;
  for (let i = 0; i < PROMPTS; i += 1) {
    const sent = await alice.agent<Snapshot>({ ...base, action: 'send', text: `prompt ${i}` });
    expect(sent.status).toBe('ok');
    // Watch until the turn finished.
    for (;;) {
      const watched = await alice.agent<Snapshot>({ ...base, action: 'watch', cursor: String(revision) });
      revision = watched.revision ?? revision;
      if (watched.status === 'ok' && !watched.running && revision > (sent.revision ?? 0)) break;
    }
  }

  // The journal head once history has everything: an `after` read with no cursor answers with it.
  const headOf = async (): Promise<string> => {
    const reply = await alice.call<HistoryJournalPageReply>(
      'GET',
      `/api/v1/sessions/${sessionId}/history?${query}&direction=after`,
    );
    const data = reply.body.data!;
    if (data.ok) throw new Error('expected the snapshot reset');
    return `${data.snapshot.cursor.epoch}:${data.snapshot.cursor.sequence}`;
  };
  // Both clients at the same head, re-read each round: history stores the last rows of a turn a
  // moment after the edge reported it finished, so the head is only final once it stops moving.
  const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
  try {
    let head = await headOf();
    for (;;) {
      while (steady.lastEventId !== head) {
        if (Date.now() > deadline)
          throw new Error(`steady client stuck at ${steady.lastEventId}, head ${head}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
        head = await headOf();
      }
      traffic = false;
      await flakyDone;
      // The flaky client's last resume: fresh connections from its last event id until it is level.
      while (flaky.lastEventId !== head || steady.lastEventId !== head) {
        if (Date.now() > deadline) {
          throw new Error(`clients at ${flaky.lastEventId} and ${steady.lastEventId}, head ${head}`);
        }
        const abort = new AbortController();
        const timer = setTimeout(() => abort.abort(), 500);
        await readStream(eventsUrl, flaky, abort.signal);
        clearTimeout(timer);
        head = await headOf();
      }
      await new Promise((resolve) => setTimeout(resolve, HEAD_SETTLE_MS));
      const settled = await headOf();
      if (settled === head) break;
      head = settled;
    }
  } finally {
    traffic = false;
    steadyAbort.abort();
    await steadyDone;
  }

  expect(reconnects).toBeGreaterThan(1);
  expect(flaky.view()).toEqual(steady.view());
  // Both equal what a fresh reader gets.
  const tail = await alice.call<HistoryJournalPageReply>(
    'GET',
    `/api/v1/sessions/${sessionId}/history?${query}&limit=200`,
  );
  const page = tail.body.data!;
  expect(page.ok).toBe(true);
  if (page.ok) expect(steady.view()).toEqual(ordered(page.page.items));
  // Each prompt and its streamed reply are items; the reply holds the whole text.
  expect(steady.view().filter((item) => item.body?.['role'] === 'user')).toHaveLength(PROMPTS);
  // Batches came from the pages the commit notices carried, not only from reads of history.
  expect(await sseBatches('committed')).toBeGreaterThan(0);
}

/** The api's count of SSE batches from `source` (tether_sse_batches_total). */
const sseBatches = (source: 'committed' | 'read'): Promise<number> =>
  metricValue(stack, 'api', 'tether_sse_batches_total', { source });

it("applies a commit notice's page only when it names the stream's own owner, access and edge", async () => {
  const edgeId = stack.edge!.id;
  const { accessId, sessionId } = await startSession(alice, edgeId, projectDir, { name: 'forged' });
  const query = `edge_id=${edgeId}&access_id=${accessId}`;
  await untilInHistory(alice, sessionId, query);
  const view = new SseView();
  const abort = new AbortController();
  const reading = readStream(
    `${stack.apiUrl}/api/v1/sessions/${sessionId}/events?${query}`,
    view,
    abort.signal,
  );
  const nc = await connectNats({ servers: stack.options.natsUrl, name: 'test-e2e-forged-notice' });
  try {
    await eventually(() => view.lastEventId, 'the stream opened');
    // A new session's first updates (the agent starting) land a moment after start: forge only
    // once the head has stood still for a second, so no real commit moves the cursor meanwhile.
    let seen = view.lastEventId;
    await eventually(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const still = view.lastEventId === seen;
      seen = view.lastEventId;
      return still ? true : undefined;
    }, 'the journal head standing still');
    const [epoch, at] = [
      view.lastEventId!.slice(0, view.lastEventId!.lastIndexOf(':')),
      Number(view.lastEventId!.split(':').at(-1)),
    ];
    // A page that would add an item, for the session's id under someone else's scope: an edge
    // chooses its session ids, so another owner's session may carry the same one.
    const forged = (scope: { actor_id: string; access_id: string; edge_id: string }, text: string) => ({
      session_id: sessionId,
      epoch,
      head: at + 1,
      committed: {
        ...scope,
        from: at,
        page: {
          sessionId,
          epoch,
          direction: 'after',
          items: [
            {
              itemId: 'm:9:0',
              revision: 1,
              sequence: at + 1,
              observedAt: 0,
              body: { type: 'message', role: 'assistant', text },
            },
          ],
          removedItemIds: [],
          submissions: [],
          window: { oldest: null, newest: null, nextCursor: { epoch, sequence: at + 1 } },
          hasOlder: at > 0,
          hasNewer: false,
          fence: 0,
        },
      },
    });
    const own = { actor_id: owner, access_id: accessId, edge_id: edgeId };
    const subject = stack.subjects.sessionJournalNotice(sessionId);
    for (const scope of [
      { ...own, actor_id: 'intruder' },
      { ...own, access_id: 'f'.repeat(32) },
      { ...own, edge_id: String(BigInt(edgeId) + 1n) },
    ]) {
      nc.publish(subject, JSON.stringify(forged(scope, 'FOREIGN')));
    }
    // Each one woke the stream to read instead; history holds nothing past the cursor.
    await nc.flush();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(view.items.has('m:9:0')).toBe(false);
    expect(view.lastEventId).toBe(`${epoch}:${at}`);
    // The control: the same page under the stream's own scope is applied (history is the only
    // publisher the subject allows), so the refusals above are the scope check's doing.
    nc.publish(subject, JSON.stringify(forged(own, 'OWN')));
    await eventually(() => (view.items.has('m:9:0') ? true : undefined), 'the own-scope page applied');
    expect(view.items.get('m:9:0')?.body?.['text']).toBe('OWN');
    expect(view.lastEventId).toBe(`${epoch}:${at + 1}`);
  } finally {
    abort.abort();
    await reading;
    await nc.close();
  }
});
