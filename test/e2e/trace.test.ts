// One send over HTTP is one trace: the api's HTTP span, the router, the edge (its turn span and
// the session updates the turn caused) and history's journal write, exported with OTLP
// http/json to a receiver this suite runs on 127.0.0.1. Every NATS and JetStream hop follows the
// messaging conventions (a PRODUCER `send <subject>` span, a CONSUMER `process <subject>` child),
// and background work (heartbeats) makes traces of its own, never spans in the request's trace.
// Then each app's /metrics parses and holds the series docs/observability.md lists.
import { jest } from '@jest/globals';
import { type ApiClient, eventually, type Snapshot } from '#test-support';
import type { Stack } from '../../scripts/stack/launcher.js';
import { EXPECTED_SERIES, type AppName } from '../integration/telemetry/expected-series.js';
import { metricsEndpoints } from '../integration/telemetry/metrics-endpoints.js';
import { OtlpReceiver, type ReceivedSpan, tracesTo } from '../integration/telemetry/otlp-receiver.js';
import { parseMetrics } from '../integration/telemetry/prometheus-text.js';
import { printOutputOnFailure, startE2eStack, type E2eStack } from '../support/e2e-stack.js';
import { scriptedTurn } from './scripted-turn.js';

jest.setTimeout(120_000);

const PROMPT = 'trace this prompt please';

let e2e: E2eStack | undefined;
let stack: Stack;
let receiver: OtlpReceiver;
let projectDir: string;
const owner = `tracer${Date.now() % 100000}`;
let client: ApiClient;

beforeAll(async () => {
  // The receiver first: every service exports to it from its first span.
  receiver = new OtlpReceiver();
  const endpoint = await receiver.start();
  e2e = await startE2eStack({
    label: 'e2etrace',
    owner,
    stack: {
      extraEnv: {
        ...tracesTo(endpoint),
        // Every heartbeat traced, so the test can see they stay out of the request's trace.
        TETHER_TRACE_BACKGROUND_RATIO: '1',
        // Ephemeral ops ports, announced in each service's log.
        TETHER_METRICS_PORT: '0',
        // History encrypts payloads at rest; any 32+ character key serves a test database.
        TETHER_HISTORY_KEY: 'e2e-history-key-0123456789abcdef0123',
      },
    },
  });
  ({ stack, projectDir } = e2e);
  client = e2e.owner;
});

afterAll(async () => {
  await e2e?.close();
  await receiver?.stop();
});

printOutputOnFailure(() => stack);

/**
 * History's journal writes of the `send session.*.journal` spans in `spans`: a `process` child
 * of the send, or a batch `process` span (a trace of its own) that links to it.
 */
function journalWrites(spans: ReceivedSpan[]): { write: ReceivedSpan; send: ReceivedSpan }[] {
  const sends = new Map(
    spans.filter((span) => span.name === 'send session.*.journal').map((span) => [span.spanId, span]),
  );
  const found: { write: ReceivedSpan; send: ReceivedSpan }[] = [];
  for (const span of receiver.spans) {
    if (span.service !== 'tether-history' || span.name !== 'process session.*.journal') continue;
    const parent = span.parentSpanId ? sends.get(span.parentSpanId) : undefined;
    if (parent) found.push({ write: span, send: parent });
    for (const link of span.links) {
      const linked = sends.get(link.spanId);
      if (linked) found.push({ write: span, send: linked });
    }
  }
  return found;
}

let turn: { sent: Snapshot; finished: Snapshot };

test('one send is one trace from the HTTP span through router and edge to the history write', async () => {
  turn = await scriptedTurn(client, stack, projectDir, PROMPT);
  expect(receiver.rejected).toEqual([]);

  // The api marks its send span with the action; its trace id is the send's.
  const sendSpan = await eventually(
    () =>
      receiver.spans.find(
        (span) => span.service === 'tether-api' && span.attributes['tether.action'] === 'send',
      ),
    'the api send span',
  );
  const traceId = sendSpan.traceId;
  expect(typeof sendSpan.attributes['tether.request_service_ms']).toBe('number');

  const inTrace = (): ReceivedSpan[] => receiver.spans.filter((span) => span.traceId === traceId);
  const named = (service: string, name: string) => (span: ReceivedSpan) =>
    span.service === service && span.name === name;
  // Everything the send caused, including history's write of the finished turn's update.
  const spans = await eventually(() => {
    const spans = inTrace();
    const turnSpan = spans.find(named('tether-edge-connector', 'agent.turn'));
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const underTurn = (span: ReceivedSpan): boolean => {
      for (let at = byId.get(span.parentSpanId ?? ''); at; at = byId.get(at.parentSpanId ?? '')) {
        if (at === turnSpan) return true;
      }
      return false;
    };
    const writes = journalWrites(spans).filter(({ send }) => underTurn(send));
    // Each process exports in its own batches: wait until every parent named has arrived too, so
    // a link that is merely still in flight is not taken for a broken one.
    const ids = new Set(spans.map((span) => span.spanId));
    const complete = spans.every((span) => !span.parentSpanId || ids.has(span.parentSpanId));
    return complete &&
      turnSpan &&
      writes.length > 0 &&
      turnSpan.attributes['tether.turn.finished_ms'] !== undefined
      ? spans
      : undefined;
  }, 'the spans of the send').catch((error: Error) => {
    const spans = inTrace();
    const ids = new Set(spans.map((span) => span.spanId));
    const orphans = spans.filter((span) => span.parentSpanId && !ids.has(span.parentSpanId));
    throw new Error(
      `${error.message}; in the trace: ${spans.map((span) => `${span.service}:${span.name}`).join(', ')}; ` +
        `parents missing for: ${orphans.map((span) => span.name).join(', ')}`,
    );
  });

  // Parent links intact: one root, the api's HTTP server span; every other parent is in the trace.
  const ids = new Set(spans.map((span) => span.spanId));
  const roots = spans.filter((span) => !span.parentSpanId);
  expect(roots).toHaveLength(1);
  expect(roots[0]!.service).toBe('tether-api');
  expect(roots[0]!.kind).toBe(2); // SERVER: the HTTP call
  for (const span of spans) if (span.parentSpanId) expect(ids.has(span.parentSpanId)).toBe(true);

  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const ancestors = (span: ReceivedSpan): ReceivedSpan[] => {
    const chain: ReceivedSpan[] = [];
    let current = span.parentSpanId ? byId.get(span.parentSpanId) : undefined;
    while (current) {
      chain.push(current);
      current = current.parentSpanId ? byId.get(current.parentSpanId) : undefined;
    }
    return chain;
  };
  // The hops, each a descendant of the one before.
  const routerHandle = spans.find(named('tether-session-router', 'process router.edge-agent'));
  const edgeRpc = spans.find(
    (span) =>
      named('tether-edge-connector', 'process edge.*.rpc')(span) &&
      span.attributes['tether.action'] === 'send',
  );
  const turnSpan = spans.find(named('tether-edge-connector', 'agent.turn'))!;
  // A turn sends several session updates (one span each); the write must descend from one of them.
  const isTurnUpdate = (span: ReceivedSpan) =>
    named('tether-session-router', 'process router.session-update')(span) &&
    ancestors(span).includes(turnSpan);
  const routerUpdate = spans.find(isTurnUpdate);
  // The write of one of the turn's rows: a child of the router's JetStream publish of that row,
  // or, when history stored it in a batch, a batch span of its own trace linking to it.
  const written = journalWrites(spans).find(({ send }) => ancestors(send).some(isTurnUpdate));
  expect(routerHandle).toBeDefined();
  expect(routerHandle!.attributes['tether.handler']).toBe('routerEdgeAgent');
  expect(edgeRpc && ancestors(edgeRpc)).toContain(routerHandle);
  expect(ancestors(turnSpan)).toContain(edgeRpc);
  expect(routerUpdate).toBeDefined();
  expect(written).toBeDefined();
  const { write, send: journalSend } = written!;
  expect(ancestors(journalSend).filter(isTurnUpdate)).toHaveLength(1);
  expect(journalSend.service).toBe('tether-session-router');
  expect(typeof journalSend.attributes['messaging.message.id']).toBe('string');
  if (write.traceId !== journalSend.traceId) {
    expect(write.parentSpanId).toBeUndefined();
    expect(Number(write.attributes['messaging.batch.message_count'])).toBeGreaterThan(1);
  }
  expect(write.attributes['messaging.consumer.group.name']).toEqual(expect.any(String));

  // Messaging conventions on every NATS and JetStream span of the send: PRODUCER `send`,
  // CONSUMER `process` whose parent is the `send` of the same destination.
  const messaging = spans.filter((span) => span.attributes['messaging.system'] !== undefined);
  expect(messaging.length).toBeGreaterThanOrEqual(8);
  for (const span of messaging) {
    const operation = span.attributes['messaging.operation.name'];
    const template = span.attributes['messaging.destination.template'];
    expect(span.attributes['messaging.system']).toBe('nats');
    expect(typeof span.attributes['messaging.destination.name']).toBe('string');
    expect(span.name).toBe(`${operation} ${template}`);
    expect(span.attributes['messaging.operation.type']).toBe(operation);
    if (operation === 'send') {
      expect(span.kind).toBe(4); // PRODUCER
    } else {
      expect(operation).toBe('process');
      expect(span.kind).toBe(5); // CONSUMER
      const parent = byId.get(span.parentSpanId!)!;
      expect([span.name, parent.name]).toEqual([span.name, `send ${template}`]);
      expect(parent.kind).toBe(4);
    }
  }
  for (const name of [
    'send router.edge-agent',
    'process router.edge-agent',
    'send edge.*.rpc',
    'process edge.*.rpc',
    'send router.session-update',
    'process router.session-update',
    'send session.*.journal',
  ]) {
    expect([name, spans.some((span) => span.name === name)]).toEqual([name, true]);
  }

  // One DB span per statement: pg's, not Prisma's copy of it; Fastify's hooks are no spans.
  expect(spans.filter((span) => span.name === 'prisma:client:db_query')).toEqual([]);
  expect(spans.filter((span) => span.service === 'tether-api' && /hook|handler -/i.test(span.name))).toEqual(
    [],
  );
  expect(roots[0]!.name).toBe('POST /api/v1/edge-agents');

  // The turn span's attributes equal the session's turn_timing; its events mark each phase.
  const timing = turn.finished.turn_timing!;
  expect(turnSpan.attributes['tether.turn.dispatch_ms']).toBe(timing.dispatch_ms);
  expect(turnSpan.attributes['tether.turn.first_reply_ms']).toBe(timing.first_reply_ms);
  expect(turnSpan.attributes['tether.turn.finished_ms']).toBe(timing.finished_ms);
  expect(turnSpan.events.map((event) => event.name)).toEqual(
    expect.arrayContaining(['dispatch', 'first_reply', 'finished']),
  );

  // No prompt, output, path or token in any attribute of any span.
  for (const span of receiver.spans) {
    for (const value of Object.values(span.attributes)) {
      const text = String(value);
      expect(text).not.toContain(PROMPT);
      expect(text).not.toContain(projectDir);
      expect(text).not.toContain(stack.edge!.token);
    }
  }
});

test('heartbeats are short traces of their own: none is a span in the send trace', async () => {
  turn ??= await scriptedTurn(client, stack, projectDir, PROMPT);
  const sendSpan = receiver.spans.find(
    (span) => span.service === 'tether-api' && span.attributes['tether.action'] === 'send',
  )!;
  // With TETHER_TRACE_BACKGROUND_RATIO=1 every heartbeat is traced: edge root, send, router process.
  const beats = await eventually(() => {
    const found = receiver.spans.filter((span) => span.name === 'edge.heartbeat');
    return found.length >= 2 ? found : undefined;
  }, 'two traced heartbeats');
  for (const beat of beats) {
    expect(beat.parentSpanId).toBeUndefined();
    expect(beat.traceId).not.toBe(sendSpan.traceId);
  }
  const heartbeatHops = receiver.spans.filter(
    (span) => span.attributes['messaging.destination.template'] === 'edge.heartbeat',
  );
  expect(heartbeatHops.some((span) => span.name === 'send edge.heartbeat' && span.kind === 4)).toBe(true);
  // The router handles each heartbeat in the heartbeat's trace; nothing of it is in the send's.
  const beatTraces = new Set(beats.map((beat) => beat.traceId));
  for (const hop of heartbeatHops) expect(beatTraces.has(hop.traceId)).toBe(true);
  const inSendTrace = receiver.spans.filter((span) => span.traceId === sendSpan.traceId);
  expect(inSendTrace.filter((span) => /heartbeat/.test(span.name))).toEqual([]);
});

test('after the scripted turn every app serves /metrics with its series, /healthz and /readyz', async () => {
  turn ??= await scriptedTurn(client, stack, projectDir, PROMPT);
  const urls = metricsEndpoints(stack);
  let last = '';
  for (const [app, url] of Object.entries(urls) as [AppName, string][]) {
    const metrics = await eventually(async () => {
      const response = await fetch(`${url}/metrics`);
      expect(response.status).toBe(200);
      const parsed = parseMetrics(await response.text());
      last = `${app}: ${[...parsed.seriesNames].join(' ')}`;
      return EXPECTED_SERIES[app].every((name) => parsed.seriesNames.has(name)) ? parsed : undefined;
    }, `${app} exporting its series`).catch((error: Error) => {
      throw new Error(`${error.message}; it exports ${last}`);
    });
    for (const name of EXPECTED_SERIES[app]) expect(metrics.seriesNames).toContain(name);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { ready: boolean }).ready).toBe(true);
    if (app === 'api') {
      expect(
        metrics.samples.some(
          (s) =>
            s.name === 'tether_http_request_duration_seconds_count' &&
            s.labels.includes('action="send"') &&
            s.labels.includes('status="200"'),
        ),
      ).toBe(true);
    }
    if (app === 'edge') {
      expect(
        metrics.samples.some(
          (s) =>
            s.name === 'tether_turn_finished_duration_seconds_count' &&
            s.labels.includes('agent_kind="scripted"'),
        ),
      ).toBe(true);
    }
  }
});
