import { jetstreamManager, RetentionPolicy, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Subjects } from '#contracts';
import { ensureStream } from './jetstream.js';

/** An audit record is a few hundred bytes of ids; anything larger is not one. */
const AUDIT_STREAM_MAX_MSG_BYTES = 4 * 1024;
/** Duplicate window for `Nats-Msg-Id` (the record id): a publisher retry lands well within it. */
const AUDIT_STREAM_DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;

/**
 * Creates (or updates) the stream that buffers audit records between the api (publisher) and
 * history (durable consumer, which stores them in Postgres). Work-queue retention: a record
 * leaves the stream once history acked it. Both sides call it at boot, so order does not matter.
 */
export async function ensureAuditStream(nc: NatsConnection, subjects: Subjects): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  const config = {
    name: subjects.auditStream,
    subjects: [subjects.auditRecords],
    retention: RetentionPolicy.Workqueue,
    max_msg_size: AUDIT_STREAM_MAX_MSG_BYTES,
    duplicate_window: AUDIT_STREAM_DUPLICATE_WINDOW_NS,
  };
  await ensureStream(jsm, config);
  return jsm;
}
