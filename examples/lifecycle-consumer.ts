// The part of the example subscriber a service would copy: attach a durable pull consumer to
// Tether's sessions stream (which the router owns and creates: a subscriber never creates or
// changes it), then handle each lifecycle event tolerantly. Fields it does not know are ignored;
// event types and envelope versions it does not know are acked and skipped, never terminated,
// so an additive change of the v1 contract cannot make a consumer drop or stall on events.
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type Consumer,
  type JsMsg,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { parseLifecycleEvent, type LifecycleEvent } from '#contracts';

/** How long one pull waits for an event before it asks again (and notices a stop request). */
const PULL_EXPIRES_MS = 5_000;
/** When the handler failed: JetStream redelivers the event after this delay. */
const RETRY_DELAY_MS = 5_000;

export interface LifecycleConsumerSettings {
  /** `<NS>_SESSIONS`. */
  stream: string;
  /** The consumer's name: its position in the stream. */
  durable: string;
  /** `<ns>.session.*.lifecycle`. */
  filterSubject: string;
  /** How long JetStream waits for an ack before it redelivers (a crashed subscriber's events). */
  ackWaitMs: number;
  /** Events delivered and not yet acked, at most (JetStream stops delivering at this bound). */
  maxAckPending: number;
}

export class StreamMissingError extends Error {
  constructor(readonly stream: string) {
    super(
      `Stream ${stream} does not exist: Tether's session router creates it when it starts. ` +
        'Start Tether first, or check TETHER_NAMESPACE.',
    );
    this.name = 'StreamMissingError';
  }
}

/**
 * Creates the durable consumer (or brings an existing one to `settings`) on the existing sessions
 * stream. A new durable starts at the first event the stream still retains (replay); an existing
 * one resumes after its last acked event.
 */
export async function attachLifecycleConsumer(
  nc: NatsConnection,
  settings: LifecycleConsumerSettings,
): Promise<Consumer> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(settings.stream);
  } catch (error) {
    if (error instanceof Error && /not found/i.test(error.message))
      throw new StreamMissingError(settings.stream);
    throw error;
  }
  const bounds = {
    filter_subject: settings.filterSubject,
    ack_wait: settings.ackWaitMs * 1_000_000,
    max_ack_pending: settings.maxAckPending,
  };
  try {
    await jsm.consumers.info(settings.stream, settings.durable);
    await jsm.consumers.update(settings.stream, settings.durable, bounds);
  } catch (error) {
    if (!(error instanceof Error) || !/not found/i.test(error.message)) throw error;
    await jsm.consumers.add(settings.stream, {
      ...bounds,
      durable_name: settings.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
  }
  return jetstream(nc).consumers.get(settings.stream, settings.durable);
}

export type MessageOutcome = 'processed' | 'skipped' | 'retry';

/**
 * Handles one delivered message: a known v1 event goes to `handle` and is acked once handled; a
 * message that is not one (unknown type, unknown `v`, not JSON) is acked and skipped; a failing
 * `handle` leaves the event for redelivery after RETRY_DELAY_MS. Never `term()`.
 */
export async function handleLifecycleMessage(
  msg: JsMsg,
  handle: (event: LifecycleEvent) => Promise<void>,
  log: (line: string) => void,
): Promise<MessageOutcome> {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(msg.data));
  } catch {
    body = undefined;
  }
  const parsed = parseLifecycleEvent(body);
  if (parsed.kind === 'skip') {
    log(`skip ${msg.subject} stream#${msg.seq}: ${parsed.reason}${parsed.type ? ` (${parsed.type})` : ''}`);
    await msg.ackAck();
    return 'skipped';
  }
  try {
    await handle(parsed.event);
  } catch (error) {
    log(`event ${parsed.event.id} not handled, retried later: ${(error as Error).message}`);
    msg.nak(RETRY_DELAY_MS);
    return 'retry';
  }
  await msg.ackAck();
  return 'processed';
}

/** Pulls and handles events one at a time until `stopped()` says so. */
export async function consumeLifecycle(
  consumer: Consumer,
  handle: (event: LifecycleEvent) => Promise<void>,
  options: { stopped: () => boolean; log: (line: string) => void },
): Promise<void> {
  while (!options.stopped()) {
    const msg = await consumer.next({ expires: PULL_EXPIRES_MS });
    if (msg) await handleLifecycleMessage(msg, handle, options.log);
  }
}
