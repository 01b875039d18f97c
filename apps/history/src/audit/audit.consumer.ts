import { Inject, Injectable, Logger } from '@nestjs/common';
import type { BackgroundService } from '#telemetry';
import type { JsMsg } from '@nats-io/jetstream';
import { auditRecordSchema } from '#contracts';
import {
  consumeTraced,
  decodeJson,
  DurableLoop,
  RetryPolicy,
  ensureAuditStream,
  MalformedPayloadError,
  NatsBus,
} from '#messaging';
import { HISTORY_CONFIG } from '../common/tokens.js';
import type { HistoryConfig } from '../config.js';
import { AuditRepository } from './audit.repository.js';

/** How long JetStream waits for an ack before redelivering: one insert. */
const AUDIT_ACK_WAIT_NS = 30 * 1_000_000_000;
/** Records handed to one replica before it acks some. */
const AUDIT_MAX_ACK_PENDING = 256;
/** Retries after a failed insert (database away). */
const AUDIT_RETRY = new RetryPolicy(2_000, 60_000, 10);
/**
 * Deliveries after which a record no insert accepted is dropped: about 45 minutes of retries at
 * the maximum delay, longer than a database restart or failover, far shorter than forever.
 */
const AUDIT_MAX_DELIVERIES = 50;
/**
 * Prisma's codes for a value the column can never hold (too long, invalid, out of range); and
 * Postgres's SQLSTATE classes 22 (data exception: NUL in text, bad encoding) and 23 (integrity).
 */
const UNSTORABLE_PRISMA_CODES = new Set(['P2000', 'P2006', 'P2007', 'P2011', 'P2012', 'P2019', 'P2020']);
const UNSTORABLE_SQLSTATE = /^2[23][0-9A-Z]{3}$/;

/** Why the database can never store this record, or null when another attempt may succeed. */
export function unstorableReason(error: unknown): string | null {
  // Prisma wraps the driver's error: walk the chain of causes (bounded) looking for a code.
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const fields = current as { code?: unknown; originalCode?: unknown; cause?: unknown; meta?: unknown };
    for (const code of [fields.code, fields.originalCode]) {
      if (typeof code !== 'string') continue;
      if (UNSTORABLE_PRISMA_CODES.has(code) || UNSTORABLE_SQLSTATE.test(code)) return `database code ${code}`;
    }
    const meta = fields.meta as { driverAdapterError?: unknown } | undefined;
    current = fields.cause ?? meta?.driverAdapterError;
  }
  return null;
}

/**
 * Stores the api's audit records (reference §2.1 "Management audit") from a durable consumer:
 * one row per record id, acked only once committed; a malformed record is terminated.
 */
@Injectable()
export class AuditConsumer implements BackgroundService {
  private readonly log = new Logger(AuditConsumer.name);
  private readonly pull = new DurableLoop();

  constructor(
    private readonly bus: NatsBus,
    @Inject(HISTORY_CONFIG) private readonly config: HistoryConfig,
    private readonly audit: AuditRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const jsm = await ensureAuditStream(this.bus.nc, this.bus.subjects, this.config.jetstream.audit);
    const stream = this.bus.subjects.auditStream;
    const durable = this.bus.subjects.historyAuditConsumer;
    const settings = { ack_wait: AUDIT_ACK_WAIT_NS, max_ack_pending: AUDIT_MAX_ACK_PENDING };
    await this.pull.consume(this.bus.nc, jsm, { stream, durable, settings }, (msg) =>
      consumeTraced(msg, durable, () => this.handle(msg)),
    );
    this.log.log(`Consuming audit records of stream ${stream} as ${durable}.`);
  }

  async onModuleDestroy(): Promise<void> {
    await this.pull.stop();
  }

  private async handle(msg: JsMsg): Promise<void> {
    let record;
    try {
      record = auditRecordSchema.safeParse(decodeJson(msg.data, msg.subject));
    } catch (error) {
      if (!(error instanceof MalformedPayloadError)) throw error;
      record = null;
    }
    if (!record?.success) {
      this.log.error(`Audit message ${msg.seq} dropped: not an audit record.`);
      msg.term();
      return;
    }
    const { id } = record.data;
    const attempt = msg.info.deliveryCount;
    try {
      await this.audit.save(record.data);
      msg.ack();
      return;
    } catch (error) {
      // Logged by id and code only: a driver message may quote the value it refused.
      const reason = unstorableReason(error);
      if (reason !== null || attempt >= AUDIT_MAX_DELIVERIES) {
        this.log.error(
          `Audit record ${id} dropped after ${attempt} attempt(s): ${reason ?? 'never accepted by the database'}.`,
        );
        msg.term();
        return;
      }
      if (AUDIT_RETRY.warns(attempt)) {
        this.log.warn(
          `Audit record ${id} not stored (attempt ${attempt}), retrying: ${(error as Error).name}.`,
        );
      }
      msg.nak(AUDIT_RETRY.delay(attempt));
    }
  }
}
