import { jetstreamManager, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Subjects } from '#contracts';
import { withIncomingTrace } from './trace-context.js';

/** Journal messages carry whole snapshots (≤ 480 KiB) plus their envelope. */
const SESSIONS_STREAM_MAX_MSG_BYTES = 1024 * 1024;
/** Duplicate window for `Nats-Msg-Id`: edge retries of one update arrive well within it. */
const SESSIONS_STREAM_DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;

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
  try {
    await jsm.streams.info(subjects.sessionsStream);
    await jsm.streams.update(subjects.sessionsStream, config);
  } catch (error) {
    if (!(error instanceof Error) || !/not found/i.test(error.message)) throw error;
    try {
      await jsm.streams.add(config);
    } catch (addError) {
      // Another service created it between our two calls.
      if (!(addError instanceof Error) || !/already in use|exists/i.test(addError.message)) {
        throw addError;
      }
    }
  }
  return jsm;
}

/**
 * Runs the handling of one JetStream delivery as a child of the publisher's span (the publisher
 * put its trace context in the message headers with `traceHeaders`), so a journal write lands
 * in the trace of the request that caused it. A child, not a link: each message has exactly one
 * producing request, and redeliveries simply add another child.
 */
export function consumeTraced<T>(msg: JsMsg, name: string, handle: () => Promise<T>): Promise<T> {
  return withIncomingTrace(name, msg.subject, msg.headers, 'consumer', handle);
}
