import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { journalEntrySchema, type JournalNoticePayload, type Subjects } from '#contracts';
import {
  consumeTraced,
  decodeJson,
  ensureDurableConsumer,
  ensureSessionsStream,
  MalformedPayloadError,
  NATS_CONNECTION,
} from '#messaging';
import { recordHistoryWrite } from '#telemetry';
import type { HistoryConfig } from '../config.js';
import { HISTORY_CONFIG, SUBJECTS } from '../common/tokens.js';
import { JournalOutOfOrderError } from './journal.repository.js';
import { JournalService, UnstorableEntryError } from './journal.service.js';

/** How long JetStream waits for an ack before redelivering: one save is a short transaction. */
const JOURNAL_ACK_WAIT_NS = 30 * 1_000_000_000;
/** Retry delays after a failed save (database down, serialization failure): doubling, capped. */
const NAK_BASE_DELAY_MS = 250;
const NAK_MAX_DELAY_MS = 30_000;
/**
 * A row whose predecessor on the subject is not applied yet waits this many deliveries (about
 * 8 s with the doubling delay) for it; then the predecessor is given up on and the row applies
 * with a gap, which `after` reads answer with `journal_gap` instead of a silently wrong timeline.
 */
const ORDER_WAIT_DELIVERIES = 6;

/** Why a message can never be stored; anything else is worth another attempt. */
function permanentReason(error: unknown): string | null {
  if (error instanceof MalformedPayloadError) return 'not JSON';
  if (error instanceof UnstorableEntryError) return error.message;
  return null;
}

function nakDelay(deliveryCount: number): number {
  const exponent = Math.min(Math.max(deliveryCount - 1, 0), 16);
  return Math.min(NAK_BASE_DELAY_MS * 2 ** exponent, NAK_MAX_DELAY_MS);
}

/**
 * The durable pull consumer that writes the session journal into Postgres. Every replica pulls
 * from the same durable consumer, so each message goes to one of them; persistence is
 * idempotent, so redeliveries (crashes before the ack, nak retries) are harmless. A message is
 * acked only after its transaction committed.
 */
@Injectable()
export class JournalConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(JournalConsumer.name);
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SUBJECTS) private readonly subjects: Subjects,
    @Inject(HISTORY_CONFIG) private readonly config: HistoryConfig,
    private readonly journal: JournalService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const jsm = await ensureSessionsStream(this.nc, this.subjects);
    const stream = this.subjects.sessionsStream;
    const durable = this.subjects.historyJournalConsumer;
    const settings = {
      filter_subject: this.subjects.journalWildcard,
      max_ack_pending: this.config.journalMaxAckPending,
      ack_wait: JOURNAL_ACK_WAIT_NS,
    };
    await ensureDurableConsumer(jsm, stream, durable, settings);
    const consumer = await jetstream(this.nc).consumers.get(stream, durable);
    this.messages = await consumer.consume({ max_messages: this.config.journalMaxAckPending });
    this.loop = this.run(this.messages);
    this.logger.log(`Consuming the session journal of stream ${stream} as ${durable}.`);
  }

  /** Stops pulling, then waits for the message in hand to be stored and acked. */
  async onModuleDestroy(): Promise<void> {
    const messages = this.messages;
    this.messages = undefined;
    if (!messages) return;
    await messages.close();
    await this.loop;
    this.logger.log('Journal consumer stopped.');
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      // Messages pulled before close() are left unacked: JetStream redelivers them elsewhere.
      if (this.messages !== messages) break;
      await consumeTraced(msg, 'history.journal.write', () => this.handle(msg));
    }
  }

  private async handle(msg: JsMsg): Promise<void> {
    const started = performance.now();
    try {
      const entry = journalEntrySchema.safeParse(decodeJson(msg.data, msg.subject));
      if (!entry.success) {
        const issue = entry.error.issues[0];
        throw new UnstorableEntryError(
          `invalid entry: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}`,
        );
      }
      if (this.subjects.sessionIdOf(msg.subject) !== entry.data.session_id) {
        throw new UnstorableEntryError('session_id does not match the subject');
      }
      const outcome = await this.journal.persist(entry.data, {
        streamSeq: msg.seq,
        force: msg.info.deliveryCount >= ORDER_WAIT_DELIVERIES,
      });
      if (outcome === 'saved' && entry.data.sequence !== undefined) {
        // Wakes live subscribers (api SSE streams); each one reads its own pages from history,
        // so a lost notice only delays a stream until its next wake-up, never loses a row.
        const notice: JournalNoticePayload = {
          session_id: entry.data.session_id,
          epoch: entry.data.epoch,
          head: entry.data.sequence,
        };
        this.nc.publish(this.subjects.sessionJournalNotice(entry.data.session_id), JSON.stringify(notice));
      }
      recordHistoryWrite(performance.now() - started, 'stored');
      msg.ack();
    } catch (error) {
      recordHistoryWrite(performance.now() - started, 'failed');
      const reason = permanentReason(error);
      if (reason !== null) {
        this.logger.error(`Journal message ${msg.seq} on ${msg.subject} dropped: ${reason}.`);
        // No reason argument: servers before 2.10.4 do not parse `+TERM <reason>` and would leave
        // the message pending; the reason is in the log line above.
        msg.term();
        return;
      }
      const delay = nakDelay(msg.info.deliveryCount);
      if (error instanceof JournalOutOfOrderError) {
        this.logger.debug(`Journal message ${msg.seq} on ${msg.subject} waits for its predecessor.`);
        msg.nak(delay);
        return;
      }
      this.logger.warn(
        `Journal message ${msg.seq} on ${msg.subject} not stored (attempt ${msg.info.deliveryCount}), retrying in ${delay} ms: ${(error as Error).message}`,
      );
      msg.nak(delay);
    }
  }
}
