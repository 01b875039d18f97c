import { DiscardPolicy, RetentionPolicy, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { StreamSettings } from '#config';
import type { Subjects } from '#contracts';
import { ensureStreamAtBoot } from './jetstream.js';
import type { StreamSpec } from './stream-config.js';

/** An audit record is a few hundred bytes of ids; anything larger is not one. */
const AUDIT_STREAM_MAX_MSG_BYTES = 4 * 1024;
/** Duplicate window for `Nats-Msg-Id` (the record id): a publisher retry lands well within it. */
const AUDIT_STREAM_DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;

/** The audit stream as the code needs it, with the operator's settings. */
export function auditStreamSpec(subjects: Subjects, settings: StreamSettings): StreamSpec {
  return {
    name: subjects.auditStream,
    subjects: [subjects.auditRecords],
    // A record leaves the stream once history acked it.
    retention: RetentionPolicy.Workqueue,
    discard: DiscardPolicy.Old,
    minDuplicateWindowNs: AUDIT_STREAM_DUPLICATE_WINDOW_NS,
    minMaxMsgSize: AUDIT_STREAM_MAX_MSG_BYTES,
    settings,
  };
}

/**
 * Makes sure the stream that buffers audit records between the api (publisher) and history
 * (durable consumer, which stores them in Postgres) exists (see ensureStream). Both sides call
 * it at boot, so order does not matter.
 */
export async function ensureAuditStream(
  nc: NatsConnection,
  subjects: Subjects,
  settings: StreamSettings,
): Promise<JetStreamManager> {
  return ensureStreamAtBoot(nc, auditStreamSpec(subjects, settings));
}
