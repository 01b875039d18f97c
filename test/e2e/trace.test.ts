// One send over HTTP is one trace: the api's HTTP span, the router, the edge (its turn span and
// the session updates the turn caused) and history's journal write, exported with OTLP
// http/json to a receiver this suite runs on 127.0.0.1. Then each app's /metrics parses and
// holds the series docs/observability.md lists.
import { ApiClient } from '#test-support';
import { jest } from '@jest/globals';
import type { Stack } from '../../scripts/stack/launcher.js';
import { EXPECTED_SERIES, type AppName } from '../integration/telemetry/expected-series.js';
import { OtlpReceiver, type ReceivedSpan } from '../integration/telemetry/otlp-receiver.js';
import { parseMetrics } from '../integration/telemetry/prometheus-text.js';
import { startE2eStack, type E2eStack } from '../support/e2e-stack.js';

jest.setTimeout(120_000);

const JWT_SECRET = 'e2e-jwt-secret-0123456789';
const EDGE_SECRET = 'e2e-edge-secret-0123456789';
const PROMPT = 'trace this prompt please';

interface Snapshot {
  status: string;
  session_id?: string;
  revision?: number;
  running?: boolean;
  installations?: { id: string; kind: string }[];
  turn_timing?: { dispatch_ms?: number | null; first_reply_ms?: number | null; finished_ms?: number | null };
  request_service_ms?: number;
}

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
    jwtSecret: JWT_SECRET,
    edgeSecret: EDGE_SECRET,
    owner,
    stack: {
      extraEnv: {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'always_on',
        OTEL_METRICS_EXPORTER: 'none',
        OTEL_LOGS_EXPORTER: 'none',
        // Export spans quickly so the suite waits little.
        OTEL_BSP_SCHEDULE_DELAY: '200',
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

const failures: string[] = [];
afterEach(() => {
  const state = expect.getState();
  if (state.currentTestName && state.assertionCalls !== state.numPassingAsserts) {
    failures.push(state.currentTestName);
  }
});
afterAll(() => {
  if (failures.length > 0) console.log(stack?.output().split('\n').slice(-150).join('\n'));
});

async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`${what} did not happen within 30 s`);
}

/** Runs one scripted turn and returns the finished snapshot. */
async function scriptedTurn(): Promise<{ sent: Snapshot; finished: Snapshot }> {
  const edgeId = stack.edge!.id;
  const discovered = await client.agent<Snapshot>({ edge_id: edgeId, action: 'discover' });
  const installation = discovered.installations?.find((candidate) => candidate.kind === 'scripted');
  const created = await client.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: 'trace',
    kind: 'scripted',
    edge_id: edgeId,
    installation_id: installation!.id,
    project: projectDir,
  });
  expect(created.status).toBe(200);
  const accessId = created.body.data!.id;
  const started = await client.agent<Snapshot>({
    edge_id: edgeId,
    action: 'start',
    access_id: accessId,
    installation_id: installation!.id,
    project: projectDir,
  });
  expect(started.status).toBe('ok');
  const base = { edge_id: edgeId, access_id: accessId, session_id: started.session_id };
  const sent = await client.agent<Snapshot>({ ...base, action: 'send', text: PROMPT });
  expect(sent.status).toBe('ok');
  const finished = await eventually(async () => {
    const polled = await client.agent<Snapshot>({ ...base, action: 'poll' });
    return polled.status === 'ok' && !polled.running && polled.turn_timing?.finished_ms != null
      ? polled
      : undefined;
  }, 'the turn finishing');
  return { sent, finished };
}

let turn: { sent: Snapshot; finished: Snapshot };

test('one send is one trace from the HTTP span through router and edge to the history write', async () => {
  turn = await scriptedTurn();
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
    const writes = spans.filter(named('tether-history', 'history.journal.write'));
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
  }, 'the spans of the send');

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
  const routerHandle = spans.find(named('tether-session-router', 'nats.handle routerEdgeAgent'));
  const edgeRpc = spans.find(named('tether-edge-connector', 'edge.rpc send'));
  const turnSpan = spans.find(named('tether-edge-connector', 'agent.turn'))!;
  // A turn sends several session updates (one span each); the write must descend from one of them.
  const isTurnUpdate = (span: ReceivedSpan) =>
    span.service === 'tether-session-router' &&
    span.name === 'nats.handle routerSessionUpdate' &&
    ancestors(span).includes(turnSpan);
  const routerUpdate = spans.find(isTurnUpdate);
  const write = spans.find(
    (span) => named('tether-history', 'history.journal.write')(span) && ancestors(span).includes(turnSpan),
  );
  expect(routerHandle).toBeDefined();
  expect(edgeRpc && ancestors(edgeRpc)).toContain(routerHandle);
  expect(ancestors(turnSpan)).toContain(edgeRpc);
  expect(routerUpdate).toBeDefined();
  expect(write).toBeDefined();
  expect(ancestors(write!).filter(isTurnUpdate)).toHaveLength(1);

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

/** The ops URL a service announced in its log (TETHER_METRICS_PORT=0). */
function opsUrl(service: string): string {
  const match = new RegExp(`Ops endpoints of ${service} at (http://[0-9.]+:[0-9]+)`).exec(stack.output());
  if (!match) throw new Error(`${service} announced no ops endpoints.\n${stack.output()}`);
  return match[1]!;
}

test('after the scripted turn every app serves /metrics with its series, /healthz and /readyz', async () => {
  turn ??= await scriptedTurn();
  const urls: Record<AppName, string> = {
    api: opsUrl('api'),
    router: opsUrl('session-router'),
    edge: opsUrl('edge-connector'),
    history: opsUrl('history'),
  };
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
            s.name === 'tether_http_request_duration_count' &&
            s.labels.includes('action="send"') &&
            s.labels.includes('status="200"'),
        ),
      ).toBe(true);
    }
    if (app === 'edge') {
      expect(
        metrics.samples.some(
          (s) =>
            s.name === 'tether_turn_finished_duration_count' && s.labels.includes('agent_kind="scripted"'),
        ),
      ).toBe(true);
    }
  }
});
