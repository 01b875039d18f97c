import { Inject, Injectable, Logger } from '@nestjs/common';
import { JetStreamApiCodes, JetStreamApiError, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { JournalMessage, JournalNoticePayload } from '#contracts';
import {
  consumeBatchTraced,
  consumeTraced,
  decodeJson,
  DurableLoop,
  RetryPolicy,
  ensureSessionsStream,
  JournalCipher,
  NatsBus,
} from '#messaging';
import { recordHistoryWrite, type BackgroundService } from '#telemetry';
import type { HistoryConfig } from '../config.js';
import { HISTORY_CONFIG } from '../common/tokens.js';
import { forcedByWaiting, JournalChainRepair, type StreamRow } from './journal-chain-repair.js';
import { JournalChainRepository } from './journal-chain.repository.js';
import {
  bySession,
  parseJournalMessage,
  permanentReason,
  withPage,
  type Parsed,
} from './journal-messages.js';
import {
  JournalOutOfOrderError,
  JournalService,
  UnstorableEntryError,
  type Delivery,
  type PersistedBatch,
  type PersistOutcome,
} from './journal.service.js';
import { SessionBatcher } from './session-batcher.js';

/** How long JetStream waits for an ack before redelivering: one save is a short transaction. */
const JOURNAL_ACK_WAIT_NS = 30 * 1_000_000_000;
/**
 * The most messages of one session written in one transaction. Bounded so one busy session's
 * transaction (and the acks waiting on it) stays short; what is left forms its next batch.
 */
const JOURNAL_BATCH_MAX = 128;
/**
 * The most messages one transaction takes over all its sessions: quiet sessions (a row or two
 * each) share a transaction, bounded so its statements (and the acks waiting on it) stay short.
 */
const JOURNAL_UNIT_MAX = 256;
/**
 * Retries after a failed save (database down, serialization failure). The cap bounds how long
 * history lags once Postgres is back: every row naked during an outage returns within it (a retry
 * against a database that is still down fails fast).
 */
const SAVE_RETRY = new RetryPolicy(250, 5_000, 10);
/**
 * Retries of a row whose predecessor is not stored yet: the predecessor is in the stream and
 * arrives on its own (or is filled from it), so waiting longer than the cap only delays the session.
 */
const OUT_OF_ORDER_RETRY = new RetryPolicy(100, 1_000, 10);

/**
 * The durable pull consumer that writes the session journal into Postgres. Every replica pulls
 * from the same durable consumer, so each message goes to one of them; persistence is
 * idempotent, so redeliveries (crashes before the ack, nak retries) are harmless. Messages are
 * grouped by session (SessionBatcher) and the batches of several sessions are written in one
 * transaction; a message is acked only after the transaction holding it committed.
 */
@Injectable()
export class JournalConsumer implements BackgroundService {
  private readonly log = new Logger(JournalConsumer.name);
  private readonly pull = new DurableLoop();
  private readonly batcher: SessionBatcher<JsMsg>;
  private jsm: JetStreamManager | undefined;
  private readonly repair: JournalChainRepair;

  constructor(
    private readonly bus: NatsBus,
    @Inject(HISTORY_CONFIG) private readonly config: HistoryConfig,
    private readonly journal: JournalService,
    private readonly cipher: JournalCipher,
    chain: JournalChainRepository,
  ) {
    this.repair = new JournalChainRepair(
      {
        read: (seq) => this.readStored(seq),
        parse: (row) => this.parse(row),
        isPermanent: (error) => permanentReason(error) !== null,
      },
      journal,
      chain,
    );
    this.batcher = new SessionBatcher<JsMsg>(
      config.journalWriteConcurrency,
      JOURNAL_BATCH_MAX,
      JOURNAL_UNIT_MAX,
      (batches) =>
        this.handleBatch(batches.map((batch) => batch.items)).catch((error: unknown) => {
          // handleBatch settles every message itself; this is a bug guard, not a retry path.
          this.log.error(`Journal batch failed: ${(error as Error).message}`);
          for (const batch of batches) for (const msg of batch.items) msg.nak(SAVE_RETRY.baseMs);
        }),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    const jsm = await ensureSessionsStream(this.bus.nc, this.bus.subjects, this.config.jetstream.sessions);
    this.jsm = jsm;
    const stream = this.bus.subjects.sessionsStream;
    const durable = this.bus.subjects.historyJournalConsumer;
    const settings = {
      filter_subject: this.bus.subjects.journalWildcard,
      max_ack_pending: this.config.journalMaxAckPending,
      ack_wait: JOURNAL_ACK_WAIT_NS,
    };
    await this.pull.consume(this.bus.nc, jsm, { stream, durable, settings }, (msg) =>
      this.batcher.push(this.bus.subjects.sessionIdOf(msg.subject) ?? '', msg),
    );
    this.log.log(`Consuming the session journal of stream ${stream} as ${durable}.`);
  }

  /** Stops pulling, waits for the batches in hand to be stored and acked, and releases the rest. */
  async onModuleDestroy(): Promise<void> {
    if (!(await this.pull.stop())) return;
    // Pulled but not started: handed back at once (a plain nak) for this or another replica.
    for (const msg of this.batcher.takeQueued()) msg.nak();
    await this.batcher.idle();
    this.log.log('Journal consumer stopped.');
  }

  /**
   * Stores what the subjects of one or more sessions delivered together (one list per session):
   * parsed, each session's sorted into stream order, and written in one transaction (`store`).
   */
  private async handleBatch(sessions: JsMsg[][]): Promise<void> {
    const started = performance.now();
    // Stream order inside each session; the sessions stay apart (a session's rows form one run).
    const ordered = sessions.flatMap((msgs) => [...msgs].sort((a, b) => a.seq - b.seq));
    const entries: Parsed[] = [];
    for (const msg of ordered) {
      try {
        entries.push({ msg, entry: this.parse(msg) });
      } catch (error) {
        this.settle(msg, error, started);
      }
    }
    if (entries.length > 0) await this.store(entries, started);
  }

  /**
   * Writes parsed messages through the one write path (JournalService.persistBatch, a lone
   * message being a batch of one); each message is then settled on its own outcome. If the
   * transaction fails, the messages are retried one by one, each a batch of one, so a row the
   * database refuses holds back only itself (and the rows chained after it); a lone message is
   * nak'ed and retried after the usual delay. `repairHoles` false: a row whose predecessor is
   * still missing is handed back rather than repaired (the batch after a repair, see below).
   */
  private async store(entries: readonly Parsed[], started: number, repairHoles = true): Promise<void> {
    const consumer = this.bus.subjects.historyJournalConsumer;
    const persist = () =>
      this.journal.persistBatch(
        entries.map(({ msg, entry }) => ({ message: entry, delivery: this.deliveryOf(msg, entry) })),
      );
    let persisted: PersistedBatch;
    try {
      // A lone message is traced in a span of its own, several as one batch span.
      persisted =
        entries.length === 1
          ? await consumeTraced(entries[0]!.msg, consumer, persist)
          : await consumeBatchTraced(
              entries.map(({ msg }) => msg),
              consumer,
              persist,
            );
    } catch (error) {
      if (entries.length === 1) {
        // Nothing to isolate: the message is retried after the usual delay.
        this.settle(entries[0]!.msg, error, started);
        return;
      }
      this.log.warn(
        `Journal batch of ${entries.length} messages not stored, retrying them one by one: ${(error as Error).message}`,
      );
      for (const entry of entries) await this.store([entry], performance.now(), repairHoles);
      return;
    }
    await this.settleOutcomes(entries, persisted, started, repairHoles);
  }

  /**
   * Acks, nak's (its predecessor is missing: the hole is filled first) or terminates (unstorable)
   * each message on its own outcome; one notice per session carries its new head, and the page
   * its commit left when one reaches exactly that head.
   */
  private async settleOutcomes(
    entries: readonly Parsed[],
    { outcomes, pages }: PersistedBatch,
    started: number,
    repairHoles: boolean,
  ): Promise<void> {
    const heads = new Map<string, JournalNoticePayload>();
    const holes: Parsed[] = [];
    entries.forEach(({ msg, entry }, index) => {
      const outcome = outcomes[index]!;
      if (typeof outcome === 'object') {
        this.settle(msg, new UnstorableEntryError(outcome.unstorable), started);
      } else if (outcome === 'out_of_order') {
        holes.push({ msg, entry });
      } else {
        if (outcome === 'saved' && entry.sequence !== undefined) {
          heads.set(entry.session_id, {
            session_id: entry.session_id,
            epoch: entry.epoch,
            head: entry.sequence,
          });
        }
        recordHistoryWrite(performance.now() - started, 'stored');
        msg.ack();
      }
    });
    // One notice per session: subscribers at the page's start apply it, the others read their own
    // pages from the head they last saw.
    for (const head of heads.values()) this.publishNotice(withPage(head, pages));
    // A hole on first delivery is nearly always a predecessor another replica is writing right
    // now (replicas share the durable, so one session's rows interleave between them): it is
    // tried again in a moment, in a batch. Repairing it at once costs a stream read and a
    // transaction of its own per row, and made two replicas drain a backlog six times slower
    // than one (docs/scaling.md). A hole still there on a later delivery is repaired.
    const firstTry = (msg: JsMsg) => msg.info.deliveryCount <= 1;
    const toRepair: Parsed[] = [];
    for (const hole of holes) {
      if (!repairHoles) hole.msg.nak(OUT_OF_ORDER_RETRY.delay(hole.msg.info.deliveryCount));
      else if (firstTry(hole.msg)) hole.msg.nak(OUT_OF_ORDER_RETRY.baseMs);
      else toRepair.push(hole);
    }
    // One repair per session, for its first row here (stream order): filling that hole usually
    // readies the session's other rows, which then go as one batch. Repairing each of them in
    // turn (a chain query and a transaction apiece) is what kept history half a minute behind
    // after a Postgres outage, when every redelivered row of a session finds a hole.
    for (const [first, ...rest] of bySession(toRepair)) {
      await consumeTraced(first.msg, this.bus.subjects.historyJournalConsumer, () =>
        this.settleAfter(first.msg, started, () => this.storeAfterRepair(first.msg, first.entry)),
      );
      if (rest.length > 0) await this.store(rest, performance.now(), false);
    }
  }

  /** Decodes and validates a journal message; UnstorableEntryError when it never can be stored. */
  private parse(msg: StreamRow): JournalMessage {
    const entry = parseJournalMessage(decodeJson(msg.data, msg.subject), this.cipher);
    if (this.bus.subjects.sessionIdOf(msg.subject) !== entry.session_id) {
      throw new UnstorableEntryError('session_id does not match the subject');
    }
    return entry;
  }

  private deliveryOf(msg: JsMsg, entry: JournalMessage): Delivery {
    return { streamSequence: msg.seq, force: forcedByWaiting(entry, msg.info.deliveryCount) };
  }

  private publishNotice(notice: JournalNoticePayload): void {
    // Wakes live subscribers (api SSE streams); each one applies the page or reads its own from
    // history, so a lost notice only delays a stream until its next wake-up, never loses a row.
    const subject = this.bus.subjects.sessionJournalNotice(notice.session_id);
    try {
      this.bus.nc.publish(subject, JSON.stringify(notice));
    } catch (error) {
      // A page over the server's max_payload (or a closed connection): the plain wake-up still
      // serves, readers read. The rows are acked already; nothing here may undo that.
      this.log.debug(
        `Commit notice of session ${notice.session_id} not sent whole: ${(error as Error).message}`,
      );
      if (!notice.committed) return;
      const { committed: _page, ...plain } = notice;
      this.publishNotice(plain);
    }
  }

  /**
   * Stores a row whose predecessor is not applied yet once the hole before it is filled from the
   * stream; JournalOutOfOrderError (retried later) when the hole cannot be filled now.
   */
  private async storeAfterRepair(
    msg: JsMsg,
    entry: JournalMessage,
  ): Promise<{ entry: JournalMessage; outcome: PersistOutcome }> {
    const repaired = await this.repair.fill(entry);
    if (repaired === 'too_far') throw new JournalOutOfOrderError(entry.session_id);
    const delivery = this.deliveryOf(msg, entry);
    const force = delivery.force || repaired === 'gap';
    return { entry, outcome: await this.journal.persist(entry, { ...delivery, force }) };
  }

  /** Runs `store`, then acks the message (with a notice of the new head) or settles its failure. */
  private async settleAfter(
    msg: JsMsg,
    started: number,
    store: () => Promise<{ entry: JournalMessage; outcome: PersistOutcome }>,
  ): Promise<void> {
    try {
      const { entry, outcome } = await store();
      if (outcome === 'saved' && entry.sequence !== undefined) {
        this.publishNotice({ session_id: entry.session_id, epoch: entry.epoch, head: entry.sequence });
      }
      recordHistoryWrite(performance.now() - started, 'stored');
      msg.ack();
    } catch (error) {
      this.settle(msg, error, started);
    }
  }

  /** The sessions stream's message at `seq`; null when the stream no longer holds it. */
  private async readStored(seq: number): Promise<StreamRow | null> {
    if (!this.jsm) throw new Error('The journal consumer is not started.');
    try {
      const stored = await this.jsm.streams.getMessage(this.bus.subjects.sessionsStream, { seq });
      return stored ? { seq: stored.seq, subject: stored.subject, data: stored.data } : null;
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.NoMessageFound) return null;
      throw error;
    }
  }

  /** Terminates a message that can never be stored; naks one worth another attempt. */
  private settle(msg: JsMsg, error: unknown, started: number): void {
    recordHistoryWrite(performance.now() - started, 'failed');
    const reason = permanentReason(error);
    if (reason !== null) {
      this.log.error(`Journal message ${msg.seq} on ${msg.subject} dropped: ${reason}.`);
      // No reason argument: servers before 2.10.4 do not parse `+TERM <reason>` and would leave
      // the message pending; the reason is in the log line above.
      msg.term();
      return;
    }
    const attempt = msg.info.deliveryCount;
    if (error instanceof JournalOutOfOrderError) {
      this.log.debug(`Journal message ${msg.seq} on ${msg.subject} waits for its predecessor.`);
      msg.nak(OUT_OF_ORDER_RETRY.delay(attempt));
      return;
    }
    const delay = SAVE_RETRY.delay(attempt);
    if (SAVE_RETRY.warns(attempt)) {
      this.log.warn(
        `Journal message ${msg.seq} on ${msg.subject} not stored (attempt ${attempt}), retrying in ${delay} ms: ${(error as Error).message}`,
      );
    }
    msg.nak(delay);
  }
}
