import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { auditRecordSchema, type Subjects } from '#contracts';
import {
  consumeTraced,
  decodeJson,
  ensureDurableConsumer,
  ensureAuditStream,
  MalformedPayloadError,
  NATS_CONNECTION,
} from '#messaging';
import { SUBJECTS } from '../common/tokens.js';
import { AuditRepository } from './audit.repository.js';

/** How long JetStream waits for an ack before redelivering: one insert. */
const AUDIT_ACK_WAIT_NS = 30 * 1_000_000_000;
/** Records handed to one replica before it acks some. */
const AUDIT_MAX_ACK_PENDING = 256;
/** Retry delay after a failed insert (database away). */
const AUDIT_NAK_DELAY_MS = 2_000;

/**
 * Stores the api's audit records (reference §2.1 "Management audit") from a durable consumer:
 * one row per record id, acked only once committed; a malformed record is terminated.
 */
@Injectable()
export class AuditConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(AuditConsumer.name);
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SUBJECTS) private readonly subjects: Subjects,
    private readonly audit: AuditRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const jsm = await ensureAuditStream(this.nc, this.subjects);
    const stream = this.subjects.auditStream;
    const durable = this.subjects.historyAuditConsumer;
    await ensureDurableConsumer(jsm, stream, durable, {
      ack_wait: AUDIT_ACK_WAIT_NS,
      max_ack_pending: AUDIT_MAX_ACK_PENDING,
    });
    const consumer = await jetstream(this.nc).consumers.get(stream, durable);
    this.messages = await consumer.consume({ max_messages: AUDIT_MAX_ACK_PENDING });
    this.loop = this.run(this.messages);
    this.logger.log(`Consuming audit records of stream ${stream} as ${durable}.`);
  }

  async onModuleDestroy(): Promise<void> {
    const messages = this.messages;
    this.messages = undefined;
    if (!messages) return;
    await messages.close();
    await this.loop;
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      if (this.messages !== messages) break;
      await consumeTraced(msg, this.subjects.historyAuditConsumer, () => this.handle(msg));
    }
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
      this.logger.error(`Audit message ${msg.seq} dropped: not an audit record.`);
      msg.term();
      return;
    }
    try {
      await this.audit.save(record.data);
      msg.ack();
    } catch (error) {
      this.logger.warn(`Audit record ${record.data.id} not stored, retrying: ${(error as Error).message}`);
      msg.nak(AUDIT_NAK_DELAY_MS);
    }
  }
}
