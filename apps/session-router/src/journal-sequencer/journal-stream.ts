import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import {
  jetstream,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import {
  isSubmissionEntry,
  journalMessageSchema,
  type JournalMessage,
  type JournalWireMessage,
} from '#contracts';
import {
  JournalCipher,
  decodeJson,
  encodeJson,
  ensureSessionsStream,
  withSendSpan,
  NatsBus,
} from '#messaging';
import { ROUTER_CONFIG } from '../common/tokens.js';
import type { RouterConfig } from '../config.js';

/** How long the router waits for JetStream to store a journal entry before the edge retries. */
const JOURNAL_PUBLISH_TIMEOUT_MS = 5_000;

/** The last message on a session's journal subject, as the re-seed needs it. */
export interface LastJournalMessage {
  streamSequence: number;
  /**
   * Null when the message is not a readable row (then its position is all we know). An edge
   * update's row or a router-written submission row: both carry epoch, sequence and revision.
   * An update's snapshot stays sealed: the sequencer needs its ids and positions only.
   */
  entry: JournalWireMessage | null;
}

export type PublishOutcome =
  | { kind: 'stored'; streamSequence: number }
  /** JetStream already held this message id: another replica (or an earlier try) stored it. */
  | { kind: 'duplicate'; streamSequence: number }
  /** Someone else appended to the subject first: the head moved, re-read it. */
  | { kind: 'moved' };

/**
 * The session journal in JetStream: appends guarded by the expected last subject sequence (so
 * two replicas can never both write one position: one wins, the other re-reads), and the read
 * of a subject's last message that re-seeds Redis (docs/architecture.md invariants 1 and 2).
 */
@Injectable()
export class JournalStream implements OnModuleInit {
  private js!: JetStreamClient;
  private jsm!: JetStreamManager;

  constructor(
    private readonly bus: NatsBus,
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    private readonly cipher: JournalCipher,
  ) {}

  async onModuleInit(): Promise<void> {
    this.jsm = await ensureSessionsStream(this.bus.nc, this.bus.subjects, this.config.sessionsStream);
    this.js = jetstream(this.bus.nc);
  }

  async append(
    entry: JournalMessage,
    msgId: string,
    expectedLastSubjectSequence: number,
  ): Promise<PublishOutcome> {
    const subject = this.bus.subjects.sessionJournal(entry.session_id);
    // Conversation content never rests on JetStream in plain text; submission rows hold none.
    const stored = isSubmissionEntry(entry) ? entry : this.cipher.seal(entry);
    const body = encodeJson(stored);
    try {
      const ack = await withSendSpan(
        subject,
        {
          messageId: msgId,
          bodySize: body.length,
          errorType: (error) => (isWrongLastSequence(error) ? 'moved' : 'error'),
        },
        (headers) =>
          this.js.publish(subject, body, {
            msgID: msgId,
            timeout: JOURNAL_PUBLISH_TIMEOUT_MS,
            headers,
            expect: { lastSubjectSequence: expectedLastSubjectSequence },
          }),
      );
      return { kind: ack.duplicate ? 'duplicate' : 'stored', streamSequence: ack.seq };
    } catch (error) {
      if (isWrongLastSequence(error)) return { kind: 'moved' };
      throw error;
    }
  }

  /**
   * The stream sequence of the last edge-update row at or before `streamSequence`, following
   * the chain back past router-written submission rows (they change no snapshot). An unreadable
   * message ends the walk where it is.
   */
  async edgeRowAtOrBefore(streamSequence: number): Promise<number> {
    let sequence = streamSequence;
    for (let hop = 0; hop < SUBMISSION_HOPS_MAX && sequence > 0; hop += 1) {
      let message;
      try {
        message = await this.jsm.streams.getMessage(this.bus.subjects.sessionsStream, { seq: sequence });
      } catch (error) {
        if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.NoMessageFound) break;
        throw error;
      }
      const entry = message ? readableEntry(message.data, message.subject) : null;
      if (!entry || !isSubmissionEntry(entry)) break;
      sequence = entry.prev_stream_seq;
    }
    return sequence;
  }

  /** The subject's last message, or null when the stream holds none for this session. */
  async last(sessionId: string): Promise<LastJournalMessage | null> {
    let message;
    try {
      message = await this.jsm.streams.getMessage(this.bus.subjects.sessionsStream, {
        last_by_subj: this.bus.subjects.sessionJournal(sessionId),
      });
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.NoMessageFound) return null;
      throw error;
    }
    if (!message) return null;
    return { streamSequence: message.seq, entry: readableEntry(message.data, message.subject) };
  }
}

/** Submission rows skipped looking for an edge row (a send writes two; a few sends in a row, more). */
const SUBMISSION_HOPS_MAX = 32;

/** The row, or null when the message is not JSON or not a journal row. */
function readableEntry(data: Uint8Array, subject: string): JournalWireMessage | null {
  try {
    const parsed = journalMessageSchema.safeParse(decodeJson(data, subject));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function isWrongLastSequence(error: unknown): boolean {
  if (error instanceof JetStreamApiError) {
    return (
      error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown
    );
  }
  return error instanceof Error && /wrong last sequence/i.test(error.message);
}
