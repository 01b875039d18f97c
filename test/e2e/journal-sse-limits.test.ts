// The SSE stream's limits on the real chain (docs/contract.md "Live events"), with the api's
// heartbeat and grant re-check shortened through its config: the heartbeat comment arrives; a
// subscriber that stops reading is sent a `reset` and closed once over the 1 MiB buffer while
// another subscriber of the same session keeps receiving batches and turns keep completing; a
// revoked grant (access deleted, token expired) closes a stream at the re-check, and a history
// that cannot answer the re-check does not: the grant it gave stands in, as for edge calls.
import { jest } from '@jest/globals';
import { jetstreamManager } from '@nats-io/jetstream';
import { SignJWT } from 'jose';
import {
  ALL_PERMISSIONS,
  signToken,
  testServices,
  TEST_JWT_SECRET,
  type Snapshot,
  findInstallation,
  openSession,
} from '#test-support';
import { connectNats } from '#messaging';
import type { Stack } from '../../scripts/stack/launcher.js';
import { startE2eStack, withOutput, untilInHistory, type E2eStack } from '../support/e2e-stack.js';
import { SseClient } from './sse-client.js';
import type { Installation } from '#contracts';

jest.setTimeout(420_000);

const HEARTBEAT_MS = 300;
const REAUTHORIZE_MS = 1_000;
/** Generous bound on anything that should happen within a few timer periods. */
const EVENT_TIMEOUT_MS = 30_000;
/** Bound on one scripted turn (hundreds of journal rows). */
const TURN_TIMEOUT_MS = 60_000;
/**
 * Bound on the traffic before the stalled subscriber must have been cut off. Usually a handful of
 * turns do it; the bound is in time, not turns, because a loaded machine journals fewer (coarser)
 * rows per turn, and the kernel's socket buffers absorb several MiB before the api's own buffer
 * grows.
 */
const CUT_OFF_TIMEOUT_MS = 240_000;
/**
 * One turn streams a ~58 KB reply (under the 64 KiB item bound) in many deltas: each journal row revises the reply item, so
 * every batch re-sends it at its current size and a stalled subscriber falls megabytes behind.
 */
const REPLY = 'streamed. '.repeat(5_800);
const REPLY_DELTAS = 120;
/** Far enough apart that the edge reports (nearly) every delta as its own journal row. */
const REPLY_DELTA_DELAY_MS = 40;

let e2e: E2eStack;
let stack: Stack;
const owner = `lim${Date.now() % 100000}`;
let token: string;
let edgeId: string;
let installation: Installation;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2ssel',
    owner,
    stack: {
      extraEnv: {
        TETHER_SSE_HEARTBEAT_MS: String(HEARTBEAT_MS),
        TETHER_SSE_REAUTHORIZE_MS: String(REAUTHORIZE_MS),
      },
    },
    script: {
      rules: [
        { steps: [{ type: 'reply', text: REPLY, deltas: REPLY_DELTAS, delay_ms: REPLY_DELTA_DELAY_MS }] },
      ],
    },
  });
  stack = e2e.stack;
  token = await signToken(TEST_JWT_SECRET, owner);
  edgeId = stack.edge!.id;
  installation = await findInstallation(e2e.owner, edgeId);
});

afterAll(async () => {
  if (stack) {
    const nc = await connectNats({ servers: (await testServices()).natsUrl, name: 'test-e2e-sse-limits' });
    await (await jetstreamManager(nc)).streams.delete(stack.subjects.sessionsStream).catch(() => undefined);
    await nc.close();
  }
  await e2e?.close();
});

/** A new access and a session started on it, present in history. */
async function session(name: string): Promise<{ accessId: string; sessionId: string; url: string }> {
  const started = await openSession(e2e.owner, { edgeId, installation, project: e2e.projectDir, name });
  const { accessId, sessionId } = started;
  const query = `edge_id=${edgeId}&access_id=${accessId}`;
  await untilInHistory(e2e.owner, sessionId, query, EVENT_TIMEOUT_MS);
  return { accessId, sessionId, url: `${stack.apiUrl}/api/v1/sessions/${sessionId}/events?${query}` };
}

/** One series of the api's `/metrics`, on the ops port it announced (TETHER_METRICS_PORT=0); 0 when absent. */
async function apiMetric(name: string): Promise<number> {
  const ops = /Ops endpoints of api at (http:\/\/[0-9.]+:[0-9]+)/.exec(stack.output());
  if (!ops) throw new Error(`the api announced no ops endpoints.\n${stack.output()}`);
  const text = await (await fetch(`${ops[1]}/metrics`)).text();
  const series = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'm').exec(text);
  return series ? Number(series[1]) : 0;
}

/** The api's open-streams gauge. */
const openStreams = () => apiMetric('tether_sse_streams');

it('sends the heartbeat comment on an idle stream', () =>
  withOutput(stack, async () => {
    const { accessId, sessionId, url } = await session('heartbeat');
    const stream = await SseClient.open(url, token);
    expect(stream.status).toBe(200);
    await stream.until((c) => c.comments.includes('heartbeat'), 'a heartbeat comment', EVENT_TIMEOUT_MS);
    expect(stream.ended).toBe(false);
    stream.close();
    // The edge holds at most 4 live sessions and this suite starts 5.
    const stopped = await e2e.owner.agent<Snapshot>({
      edge_id: edgeId,
      access_id: accessId,
      session_id: sessionId,
      action: 'stop',
    });
    expect(stopped).toMatchObject({ status: 'session_closed', closed: true });
  }));

it('cuts off a subscriber that stopped reading while another keeps receiving batches', () =>
  withOutput(stack, async () => {
    const { accessId, sessionId, url } = await session('slow');
    const base = { edge_id: edgeId, access_id: accessId, session_id: sessionId };
    const fast = await SseClient.open(url, token);
    const slow = await SseClient.open(url, token);
    await fast.until((c) => c.types().includes('snapshot'), 'the fast snapshot', EVENT_TIMEOUT_MS);
    await slow.until((c) => c.types().includes('snapshot'), 'the slow snapshot', EVENT_TIMEOUT_MS);
    expect(await openStreams()).toBeGreaterThanOrEqual(2);
    slow.pause();
    const before = await openStreams();

    let revision = 0;
    const turn = async (text: string): Promise<void> => {
      const sent = await e2e.owner.agent<Snapshot>({ ...base, action: 'send', text });
      expect(sent.status).toBe('ok');
      const deadline = Date.now() + TURN_TIMEOUT_MS;
      for (;;) {
        const watched = await e2e.owner.agent<Snapshot>({
          ...base,
          action: 'watch',
          cursor: String(revision),
        });
        revision = watched.revision ?? revision;
        if (watched.status === 'ok' && !watched.running && revision > (sent.revision ?? 0)) return;
        if (Date.now() > deadline) throw new Error('the turn did not finish');
      }
    };

    // Traffic until the api has let the stalled stream go (its gauge drops by one); the writer
    // is never held up: every turn completes while that subscriber reads nothing.
    let turns = 0;
    const deadline = Date.now() + CUT_OFF_TIMEOUT_MS;
    while ((await openStreams()) >= before) {
      if (Date.now() > deadline) throw new Error(`the stalled stream was still open after ${turns} turns`);
      await turn(`prompt ${turns}`);
      turns += 1;
    }
    expect(fast.ended).toBe(false);
    const batchesBefore = fast.types().filter((type) => type === 'batch').length;
    expect(batchesBefore).toBeGreaterThan(0);

    // The other subscriber of the session is unaffected: it still receives the next turn.
    await turn('after the cut-off');
    await fast.until(
      (c) => c.types().filter((type) => type === 'batch').length > batchesBefore,
      'a batch after the cut-off',
      EVENT_TIMEOUT_MS,
    );
    expect(fast.types()).not.toContain('reset');
    expect(fast.ended).toBe(false);

    // The stalled subscriber, reading again, finds what was buffered, then the reset, then the end.
    slow.resume();
    await slow.until((c) => c.ended, 'the stalled stream to end', EVENT_TIMEOUT_MS);
    const last = slow.events.at(-1)!;
    expect(last.type).toBe('reset');
    expect(JSON.parse(last.data)).toMatchObject({ type: 'reset', sessionId, reset: 'cursor_ahead' });
    expect(slow.types()).not.toContain('end');
    fast.close();
  }));

it('closes a stream at the re-check once its access is deleted', () =>
  withOutput(stack, async () => {
    const { accessId, url } = await session('revoked');
    const stream = await SseClient.open(url, token);
    await stream.until((c) => c.types().includes('snapshot'), 'the snapshot', EVENT_TIMEOUT_MS);
    const removed = await e2e.owner.call('DELETE', `/api/v1/agent-accesses/${accessId}`);
    expect(removed.status).toBe(200);
    await stream.until((c) => c.ended, 'the stream to close', EVENT_TIMEOUT_MS);
    // Closed for the grant, not ended for a deleted session.
    expect(stream.types()).not.toContain('end');
  }));

it('closes a stream at the re-check once its token expired', () =>
  withOutput(stack, async () => {
    const { url } = await session('expiring');
    const expiresAt = Math.floor(Date.now() / 1000) + 3;
    const shortLived = await new SignJWT({ permissions: ALL_PERMISSIONS })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(owner)
      .setIssuedAt()
      .setExpirationTime(expiresAt)
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const stream = await SseClient.open(url, shortLived);
    expect(stream.status).toBe(200);
    await stream.until((c) => c.types().includes('snapshot'), 'the snapshot', EVENT_TIMEOUT_MS);
    await stream.until((c) => c.ended, 'the stream to close', EVENT_TIMEOUT_MS);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt * 1000);
    expect(stream.types()).not.toContain('end');
  }));

it('keeps a stream open while history cannot answer its re-checks, and it carries on once history is back', () =>
  withOutput(stack, async () => {
    const { accessId, sessionId, url } = await session('outage');
    const stream = await SseClient.open(url, token);
    await stream.until((c) => c.types().includes('snapshot'), 'the snapshot', EVENT_TIMEOUT_MS);
    const standInsBefore = await apiMetric('tether_authorize_outage_grants_total');
    await stack.stop('history');
    try {
      // Re-checks (every REAUTHORIZE_MS) find no history; the grant it gave at open stands in.
      const deadline = Date.now() + EVENT_TIMEOUT_MS;
      while ((await apiMetric('tether_authorize_outage_grants_total')) < standInsBefore + 3) {
        if (Date.now() > deadline) throw new Error('no re-check was stood in for while history was down');
        await new Promise((resolve) => setTimeout(resolve, REAUTHORIZE_MS));
      }
      expect(stream.ended).toBe(false);
    } finally {
      await stack.start('history');
      await stack.historyReady();
    }
    // The same stream, never reopened, receives what the next turn journals.
    const batches = stream.types().filter((type) => type === 'batch').length;
    const sent = await e2e.owner.agent<Snapshot>({
      edge_id: edgeId,
      access_id: accessId,
      session_id: sessionId,
      action: 'send',
      text: 'after the outage',
    });
    expect(sent.status).toBe('ok');
    await stream.until(
      (c) => c.types().filter((type) => type === 'batch').length > batches,
      'a batch after the outage',
      EVENT_TIMEOUT_MS,
    );
    expect(stream.ended).toBe(false);
    stream.close();
  }));
