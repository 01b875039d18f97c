import { Logger } from '@nestjs/common';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  type ConsumerMessages,
  type ConsumerUpdateConfig,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
} from '@nats-io/jetstream';
import { PermissionViolationError } from '@nats-io/nats-core';
import type { NatsConnection } from '@nats-io/transport-node';
import type { StreamSettings } from '#config';
import type { Subjects } from '#contracts';
import {
  compareStream,
  describeDifference,
  StreamConfigError,
  streamConfig,
  type StreamSpec,
} from './stream-config.js';
import { withIncomingTrace, withIncomingTraces } from './trace-context.js';

/** Journal messages carry whole snapshots (≤ 480 KiB) plus their envelope. */
const SESSIONS_STREAM_MAX_MSG_BYTES = 1024 * 1024;
/** Duplicate window for `Nats-Msg-Id`: edge retries of one update arrive well within it. */
const SESSIONS_STREAM_DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;

/**
 * How long a boot waits for JetStream: a cluster that lost its meta leader elects another within
 * seconds, and a service started with its NATS (compose, a fresh cluster) may be up before
 * JetStream is. Past this, the boot fails and the orchestrator restarts the process.
 */
const JETSTREAM_READY_TIMEOUT_MS = 60_000;
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;

const log = new Logger('JetStream');

function notFound(error: unknown): boolean {
  return error instanceof Error && /not found/i.test(error.message);
}

/** Errors that waiting cannot cure: a stream that breaks an invariant, a refused permission. */
function permanent(error: unknown): boolean {
  return (
    error instanceof StreamConfigError ||
    error instanceof PermissionViolationError ||
    (error instanceof Error && /permissions? violation|authorization/i.test(error.message))
  );
}

export interface RetryOptions {
  /** Default JETSTREAM_READY_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Names the work in the log lines of each retry. */
  what: string;
}

/**
 * Runs `work` until it succeeds, retrying with a doubling, jittered pause while JetStream cannot
 * answer (no meta leader yet, a stream leader being elected, the server still starting), for a
 * bounded time; a permanent error ends it at once.
 */
export async function withJetStreamRetry<T>(work: () => Promise<T>, options: RetryOptions): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? JETSTREAM_READY_TIMEOUT_MS);
  let pause = RETRY_FIRST_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (permanent(error) || Date.now() + pause > deadline) throw error;
      log.warn(`${options.what}: JetStream not ready (${(error as Error).message}); retry ${attempt}.`);
      await new Promise((resolve) => setTimeout(resolve, pause / 2 + Math.random() * pause));
      pause = Math.min(pause * 2, RETRY_MAX_MS);
    }
  }
}

/**
 * Makes sure the stream exists. A missing stream is created from `spec` (its invariants and the
 * operator's settings). An existing one is never changed: the settings an operator gave it
 * (replicas, age and size limits, storage) stay, and each difference from `spec` is logged; a
 * difference that breaks what the code relies on (subjects, retention, ...) fails the boot with
 * a message that says what to fix. Every service that publishes or consumes calls this at boot,
 * so start-up order does not matter.
 */
export async function ensureStream(jsm: JetStreamManager, spec: StreamSpec): Promise<void> {
  let existing: StreamConfig;
  try {
    existing = (await jsm.streams.info(spec.name)).config;
  } catch (error) {
    if (!notFound(error)) throw error;
    try {
      await jsm.streams.add(streamConfig(spec));
      log.log(
        `Created stream ${spec.name} (${spec.settings.replicas} replica(s), ${spec.settings.storage}).`,
      );
      return;
    } catch (addError) {
      // Another service created it between our two calls: check theirs like any other.
      if (!(addError instanceof Error) || !/already in use|exists/i.test(addError.message)) throw addError;
      existing = (await jsm.streams.info(spec.name)).config;
    }
  }
  const differences = compareStream(spec, existing);
  const broken = differences.filter((difference) => difference.breaks);
  if (broken.length > 0) throw new StreamConfigError(spec.name, broken);
  if (differences.length > 0) {
    log.log(`Stream ${spec.name} keeps its own settings: ${differences.map(describeDifference).join('; ')}.`);
  }
}

/**
 * Creates a durable pull consumer with explicit acks from the start of the stream, or brings an
 * existing one to `settings` (so a changed bound applies on the next boot).
 */
export async function ensureDurableConsumer(
  jsm: JetStreamManager,
  stream: string,
  durable: string,
  settings: Partial<ConsumerUpdateConfig>,
): Promise<void> {
  await withJetStreamRetry(
    async () => {
      try {
        await jsm.consumers.info(stream, durable);
        await jsm.consumers.update(stream, durable, settings);
      } catch (error) {
        if (!notFound(error)) throw error;
        await jsm.consumers.add(stream, {
          ...settings,
          durable_name: durable,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
        });
      }
    },
    { what: `consumer ${durable}` },
  );
}

/**
 * Creates or updates the durable consumer, then pulls from it, never holding more messages than
 * JetStream lets it leave unacknowledged.
 */
export async function consumeDurable(
  nc: NatsConnection,
  jsm: JetStreamManager,
  stream: string,
  durable: string,
  settings: Partial<ConsumerUpdateConfig> & { max_ack_pending: number },
): Promise<ConsumerMessages> {
  await ensureDurableConsumer(jsm, stream, durable, settings);
  const consumer = await jetstream(nc).consumers.get(stream, durable);
  return consumer.consume({ max_messages: settings.max_ack_pending });
}

/** How long a failed message waits before its redelivery: doubling per delivery, capped. */
export function redeliveryDelay(deliveryCount: number, baseMs: number, maxMs: number): number {
  const exponent = Math.min(Math.max(deliveryCount - 1, 0), 16);
  return Math.min(baseMs * 2 ** exponent, maxMs);
}

/** How a consumer retries a message it could not handle (the database away, a predecessor missing). */
export class RetryPolicy {
  constructor(
    /** The delay after the first failed delivery; it doubles per delivery. */
    readonly baseMs: number,
    /** The longest delay: bounds how long the consumer lags once the cause is gone. */
    readonly maxMs: number,
    /** A failing streak logs its first attempt and then every this many, so an outage cannot flood the log. */
    readonly warnEvery: number,
  ) {}

  /** The redelivery delay after failed delivery number `attempt`. */
  delay(attempt: number): number {
    return redeliveryDelay(attempt, this.baseMs, this.maxMs);
  }

  /** Whether failed delivery number `attempt` is logged. */
  warns(attempt: number): boolean {
    return attempt <= 1 || attempt % this.warnEvery === 0;
  }
}

/** The session journal's stream as the code needs it, with the operator's settings. */
export function sessionsStreamSpec(subjects: Subjects, settings: StreamSettings): StreamSpec {
  return {
    name: subjects.sessionsStream,
    subjects: [subjects.journalWildcard, subjects.lifecycleWildcard],
    // History's consumer and any subscriber (docs/events.md) each read all of it, and replay it.
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    minDuplicateWindowNs: SESSIONS_STREAM_DUPLICATE_WINDOW_NS,
    minMaxMsgSize: SESSIONS_STREAM_MAX_MSG_BYTES,
    settings,
  };
}

/**
 * Makes sure the stream that stores every session's journal and lifecycle events exists (see
 * ensureStream). History keeps the durable copy in Postgres; the stream is the ordered,
 * replayable buffer.
 */
export async function ensureSessionsStream(
  nc: NatsConnection,
  subjects: Subjects,
  settings: StreamSettings,
): Promise<JetStreamManager> {
  return ensureStreamAtBoot(nc, sessionsStreamSpec(subjects, settings));
}

/**
 * ensureStream as a service calls it at boot: retried while JetStream cannot answer yet (see
 * withJetStreamRetry); the manager it used is returned for the caller's further set-up.
 */
export async function ensureStreamAtBoot(nc: NatsConnection, spec: StreamSpec): Promise<JetStreamManager> {
  return withJetStreamRetry(
    async () => {
      const jsm = await jetstreamManager(nc);
      await ensureStream(jsm, spec);
      return jsm;
    },
    { what: `stream ${spec.name}` },
  );
}

/**
 * Runs the handling of one JetStream delivery as a `process` span, a child of the publisher's
 * `send` span (the publisher put its trace context in the message headers), so a journal write
 * lands in the trace of the request that caused it. `durable` names the consumer group.
 */
export function consumeTraced<T>(msg: JsMsg, durable: string, handle: () => Promise<T>): Promise<T> {
  return withIncomingTrace(msg, handle, { group: durable });
}

/**
 * consumeTraced for a batch of deliveries handled by one piece of work: one `process` span
 * linked to every message's `send` span (see withIncomingTraces).
 */
export function consumeBatchTraced<T>(
  msgs: readonly JsMsg[],
  durable: string,
  handle: () => Promise<T>,
): Promise<T> {
  return withIncomingTraces(msgs, handle, { group: durable });
}
