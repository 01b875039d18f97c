import {
  AckPolicy,
  DeliverPolicy,
  jetstreamManager,
  type ConsumerUpdateConfig,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Subjects } from '#contracts';
import { withIncomingTrace, withIncomingTraces } from './trace-context.js';

/** Journal messages carry whole snapshots (≤ 480 KiB) plus their envelope. */
const SESSIONS_STREAM_MAX_MSG_BYTES = 1024 * 1024;
/** Duplicate window for `Nats-Msg-Id`: edge retries of one update arrive well within it. */
const SESSIONS_STREAM_DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;

function notFound(error: unknown): boolean {
  return error instanceof Error && /not found/i.test(error.message);
}

/**
 * Creates a stream, or brings an existing one to `config`. Every service that publishes or
 * consumes calls this at boot, so start-up order does not matter.
 */
export async function ensureStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string },
): Promise<void> {
  try {
    await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
  } catch (error) {
    if (!notFound(error)) throw error;
    try {
      await jsm.streams.add(config);
    } catch (addError) {
      // Another service created it between our two calls.
      if (!(addError instanceof Error) || !/already in use|exists/i.test(addError.message)) {
        throw addError;
      }
    }
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
}

/**
 * Creates (or updates) the stream that stores every session's journal and lifecycle events.
 * Every service that publishes or consumes calls it at boot, so start-up order does not matter.
 * History keeps the durable copy in Postgres; the stream is the ordered, replayable buffer.
 */
export async function ensureSessionsStream(
  nc: NatsConnection,
  subjects: Subjects,
): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  const config = {
    name: subjects.sessionsStream,
    subjects: [subjects.journalWildcard, subjects.lifecycleWildcard],
    max_msg_size: SESSIONS_STREAM_MAX_MSG_BYTES,
    duplicate_window: SESSIONS_STREAM_DUPLICATE_WINDOW_NS,
  };
  await ensureStream(jsm, config);
  return jsm;
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
