import { LATENCY_BUCKETS_S } from './buckets.js';
import {
  metrics,
  type Attributes,
  type Counter,
  type Histogram,
  type ObservableResult,
} from '@opentelemetry/api';

/**
 * Every metric Tether exports, by its OpenTelemetry name. The Prometheus names (what dashboards
 * and alert rules query) are these with dots as underscores and the unit as a suffix (reader.ts),
 * e.g. `tether.nats.request.duration` (s) → `tether_nats_request_duration_seconds_bucket`.
 * test/integration/telemetry checks every shipped query against the series the apps export.
 */
export const METRIC = {
  httpDuration: 'tether.http.request.duration',
  requestService: 'tether.api.request_service.duration',
  natsRequestDuration: 'tether.nats.request.duration',
  turnDispatch: 'tether.turn.dispatch.duration',
  turnFirstReply: 'tether.turn.first_reply.duration',
  turnFinished: 'tether.turn.finished.duration',
  liveSessions: 'tether.sessions.live',
  leases: 'tether.leases.active',
  watchers: 'tether.watchers.active',
  sseStreams: 'tether.sse.streams',
  sseBatches: 'tether.sse.batches',
  watchAnswers: 'tether.watch.answers',
  consumerLag: 'tether.jetstream.consumer.lag',
  historyWriteDuration: 'tether.history.write.duration',
  connectorsOnline: 'tether.connectors.online',
  submissionsSettled: 'tether.submissions.settled',
  authorizeOutageGrants: 'tether.authorize.outage_grants',
  routerCallsResent: 'tether.router.calls_resent',
} as const;

const METER = 'tether';

/** Agent turns: a dispatch takes milliseconds, a finished turn can take many minutes. */
const TURN_BUCKETS_S = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1_800];

interface Instruments {
  http: Histogram;
  requestService: Histogram;
  nats: Histogram;
  dispatch: Histogram;
  firstReply: Histogram;
  finished: Histogram;
  historyWrite: Histogram;
  submissionsSettled: Counter;
  outageGrants: Counter;
  callsResent: Counter;
  sseBatches: Counter;
  watchAnswers: Counter;
}

let instruments: Instruments | undefined;

/**
 * Created on first use, after main.ts started the SDK: the global meter provider is fixed by
 * then, and a process without telemetry (integration tests) gets no-op instruments.
 */
function get(): Instruments {
  if (instruments) return instruments;
  const meter = metrics.getMeter(METER);
  const latency = (name: string, description: string, buckets = LATENCY_BUCKETS_S) =>
    meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: buckets } });
  instruments = {
    http: latency(METRIC.httpDuration, 'HTTP requests served by the api, by action and status.'),
    requestService: latency(
      METRIC.requestService,
      'What the api spent on a send (request_service_ms, in seconds).',
    ),
    nats: latency(METRIC.natsRequestDuration, 'NATS requests made by this process, by subject and outcome.'),
    dispatch: latency(METRIC.turnDispatch, 'Agent turn: start to native dispatch.', TURN_BUCKETS_S),
    firstReply: latency(METRIC.turnFirstReply, 'Agent turn: start to first reply text.', TURN_BUCKETS_S),
    finished: latency(METRIC.turnFinished, 'Agent turn: start to completion.', TURN_BUCKETS_S),
    historyWrite: latency(METRIC.historyWriteDuration, 'History: one journal message stored in Postgres.'),
    submissionsSettled: meter.createCounter(METRIC.submissionsSettled, {
      description:
        'Sends settled by the router crash boundary: swept to unknown, or reconciled from edge records.',
    }),
    outageGrants: meter.createCounter(METRIC.authorizeOutageGrants, {
      description:
        'Edge calls and SSE re-checks the api authorized from a remembered grant because history could not answer.',
    }),
    callsResent: meter.createCounter(METRIC.routerCallsResent, {
      description:
        'Calls the api sent to the routers again because a router replica that may have held them stopped sending heartbeats.',
    }),
    sseBatches: meter.createCounter(METRIC.sseBatches, {
      description:
        'SSE journal batches the api sent, by source: the page a commit notice carried, or a page read from history.',
    }),
    watchAnswers: meter.createCounter(METRIC.watchAnswers, {
      description:
        'Watches the router waited on, by where the answer came from: the state it journaled, or a poll of the edge.',
    }),
  };
  return instruments;
}

/** Callers measure in milliseconds (performance.now()); the series are in seconds. */
const seconds = (ms: number): number => ms / 1_000;

export function recordHttpRequest(ms: number, action: string, status: number, method: string): void {
  get().http.record(seconds(ms), { action, status: String(status), method });
}

export function recordOutageGrant(): void {
  get().outageGrants.add(1);
}

export function recordRouterCallsResent(count: number): void {
  get().callsResent.add(count);
}

/** Where an SSE batch came from: the commit notice's own page, or a read. */
export function recordSseBatch(source: 'committed' | 'read'): void {
  get().sseBatches.add(1, { source });
}

/** Where a watch the router waited on got its answer: the journaled state, or the edge. */
export function recordWatchAnswer(source: 'journal' | 'edge'): void {
  get().watchAnswers.add(1, { source });
}

export function recordRequestService(ms: number): void {
  get().requestService.record(seconds(ms));
}

export type NatsOutcome = 'ok' | 'error' | 'timeout' | 'no_responders' | 'disconnected';

/**
 * How a NATS request waits: `long_poll` (a watch, which waits up to WATCH_WAIT_MS by design and is
 * kept out of latency objectives) or `request` (everything else).
 */
export type NatsCallKind = 'request' | 'long_poll';

/** `subject` must be low-cardinality: see `subjectLabel`. */
export function recordNatsRequest(
  ms: number,
  subject: string,
  outcome: NatsOutcome,
  kind: NatsCallKind,
): void {
  get().nats.record(seconds(ms), { subject, outcome, kind });
}

export interface TurnTimingMs {
  dispatch_ms?: number | null;
  first_reply_ms?: number | null;
  finished_ms?: number | null;
}

export function recordTurnTiming(timing: TurnTimingMs, agentKind: string, model: string | undefined): void {
  const attributes: Attributes = { agent_kind: agentKind, model: model ?? 'default' };
  const i = get();
  if (timing.dispatch_ms != null) i.dispatch.record(seconds(timing.dispatch_ms), attributes);
  if (timing.first_reply_ms != null) i.firstReply.record(seconds(timing.first_reply_ms), attributes);
  if (timing.finished_ms != null) i.finished.record(seconds(timing.finished_ms), attributes);
}

export function recordHistoryWrite(ms: number, outcome: 'stored' | 'failed'): void {
  get().historyWrite.record(seconds(ms), { outcome });
}

const SETTLEMENTS = ['swept_unknown', 'reconciled_accepted', 'reconciled_rejected'] as const;
export type SubmissionSettlement = (typeof SETTLEMENTS)[number];

/**
 * Exports every settlement outcome from the start, at 0 (the router calls it at boot): a healthy
 * stack settles nothing, and a series that appears only on the first failure cannot be graphed
 * or alerted on before it.
 */
export function exportSubmissionSettlements(): void {
  const counter = get().submissionsSettled;
  for (const outcome of SETTLEMENTS) counter.add(0, { outcome });
}

export function recordSubmissionsSettled(count: number, outcome: SubmissionSettlement): void {
  if (count > 0) get().submissionsSettled.add(count, { outcome });
}

/** A gauge read at scrape time; a failing read is skipped (the series goes stale, not wrong). */
export type GaugeRead = () => number | Promise<number>;

/**
 * Registers one observable gauge. Reads happen only when `/metrics` is scraped, so a gauge costs
 * nothing on the hot path.
 */
export function registerGauge(
  name: string,
  description: string,
  read: GaugeRead,
  attributes?: Attributes,
): void {
  const gauge = metrics.getMeter(METER).createObservableGauge(name, { description });
  gauge.addCallback(async (result: ObservableResult) => {
    try {
      result.observe(await read(), attributes);
    } catch {
      // Redis or NATS away for a moment: no sample this scrape; /readyz says why.
    }
  });
}

/**
 * A subject as a metric label: the namespace prefix dropped and ids replaced, so the label has a
 * fixed small set of values (`router.edge-agent`, `edge.*.rpc`, `session.*.journal`).
 */
export function subjectLabel(subject: string): string {
  const cached = labels.get(subject);
  if (cached !== undefined) return cached;
  const label = computeSubjectLabel(subject);
  // Bounded: subjects carry edge and session ids; the hot ones stay cached, the rest recompute.
  if (labels.size >= SUBJECT_LABEL_CACHE_MAX) labels.clear();
  labels.set(subject, label);
  return label;
}

/** Distinct subjects whose label is kept; a process talks to a few services and its edges. */
const SUBJECT_LABEL_CACHE_MAX = 4_096;
const labels = new Map<string, string>();

function computeSubjectLabel(subject: string): string {
  const parts = subject.split('.');
  if (parts.length < 2) return subject;
  parts.shift();
  // Per-edge subjects an edge publishes on (its own, for NATS permissions) keep the one label they
  // had before they carried the edge id: the id would make a label per edge.
  if (parts.length === 3 && parts[0] === 'edge' && parts[2] === 'heartbeat') return 'edge.heartbeat';
  if (parts.length === 3 && parts[0] === 'router' && parts[1] === 'session-update')
    return 'router.session-update';
  if ((parts[0] === 'edge' || parts[0] === 'session') && parts.length >= 3) parts[1] = '*';
  return parts.join('.');
}
