import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Redis } from 'ioredis';
import {
  verifyEdgeToken,
  type RevisionNotice,
  type SessionUpdate,
  type SessionUpdateAck,
  type Subjects,
} from '#contracts';
import { NATS_CONNECTION, ServiceError, encodeJson } from '#messaging';
import type { RouterConfig } from '../config.js';
import { EdgeCredentialsRefusedError, InvalidSessionIdError, SessionScopeError } from '../common/errors.js';
import { SESSION_ID_PATTERN } from '../common/limits.js';
import { REDIS, ROUTER_CONFIG, SUBJECTS } from '../common/tokens.js';
import { journalEntry, journalMsgId } from './journal-entry.js';
import { JournalStream } from './journal-stream.js';
import { LifecyclePublisher } from './lifecycle.js';
import { SessionUpdateRepository, type JournalHead } from './session-update.repository.js';

/** A new epoch: 16 random bytes, hex. */
const EPOCH_BYTES = 16;
/**
 * Appends one update tries before giving up (the edge retries later): each lost race means
 * another writer appended meanwhile, so a handful covers any realistic contention on one session.
 */
const APPEND_ATTEMPTS_MAX = 16;
/** Upper bound of the random pause after a lost race, so racing writers spread out. */
const APPEND_RETRY_JITTER_MS = 20;

/** The journal is contended beyond APPEND_ATTEMPTS_MAX; the edge retries the update later. */
export class JournalContendedError extends ServiceError {
  constructor(sessionId: string) {
    super('unavailable', `Journal of session ${sessionId} kept moving; the update was not stored.`);
  }
}

export function newEpoch(): string {
  return randomBytes(EPOCH_BYTES).toString('hex');
}

/**
 * The single sequencer of every session's journal (ARCHITECTURE invariants 1–3). An edge's update
 * becomes row `(epoch, sequence + 1)`, appended to JetStream only if the subject's last stream
 * sequence is still the one the head names; the edge is acknowledged only after JetStream stored
 * it; Redis then caches the new head and watchers on every replica are woken. Redis is a cache:
 * a missing head is re-seeded from the subject's last message, and when that cannot say where
 * the sequence stands, a new epoch starts (clients get `epoch_changed`, never a silent gap).
 */
@Injectable()
export class SessionUpdateService {
  private readonly log = new Logger(SessionUpdateService.name);
  private readonly lifecycle: LifecyclePublisher;

  constructor(
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SUBJECTS) private readonly subjects: Subjects,
    private readonly repository: SessionUpdateRepository,
    private readonly stream: JournalStream,
    @Inject(REDIS) redis: Redis,
  ) {
    this.lifecycle = new LifecyclePublisher(nc, subjects, redis);
  }

  async record(update: SessionUpdate): Promise<SessionUpdateAck> {
    const sessionId = update.session_id;
    if (!verifyEdgeToken(this.config.edgeSecret, update.edge_id, update.edge_token)) {
      this.log.warn(
        `Session update for session ${sessionId} from edge ${update.edge_id} refused: bad edge token.`,
      );
      throw new EdgeCredentialsRefusedError();
    }
    if (!SESSION_ID_PATTERN.test(sessionId)) throw new InvalidSessionIdError();

    const state = await this.repository.state(sessionId);
    if ((state.edge && state.edge !== update.edge_id) || (state.owner && state.owner !== update.actor_id)) {
      this.log.warn(
        `Session update for session ${sessionId} from edge ${update.edge_id} refused: scope mismatch.`,
      );
      throw new SessionScopeError(sessionId);
    }

    let head = state.head ?? (await this.reseed(sessionId));
    for (let attempt = 0; attempt < APPEND_ATTEMPTS_MAX; attempt += 1) {
      // Already journaled (the head moves only after JetStream stored it): a retry, acknowledge again.
      if (head.revision !== null && head.revision >= update.revision) {
        // The retried row may have been stored without its lifecycle events (docs/events.md).
        if (head.revision === update.revision) {
          await this.lifecycle.republishLast(sessionId, head.streamSequence, update.revision);
        }
        return { ok: true, epoch: head.epoch, sequence: head.sequence, duplicate: true };
      }
      const now = Date.now();
      const sequence = head.sequence + 1;
      const entry = {
        ...journalEntry(update, head.epoch, now),
        sequence,
        prev_stream_seq: head.streamSequence,
      };
      const outcome = await this.stream.append(
        entry,
        journalMsgId(sessionId, head.epoch, update.revision),
        head.streamSequence,
      );
      if (outcome.kind !== 'stored') {
        // Someone else wrote this position (or this very message): the stream knows where we are.
        if (outcome.kind === 'moved') {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * APPEND_RETRY_JITTER_MS));
        }
        head = await this.reseed(sessionId);
        continue;
      }
      const next: JournalHead = {
        epoch: head.epoch,
        sequence,
        streamSequence: outcome.streamSequence,
        revision: update.revision,
      };
      const duplicate = await this.repository.advance(sessionId, next, {
        owner: update.actor_id,
        access: update.access_id ?? '',
        edge: update.edge_id,
        running: update.snapshot.running === true,
        closed: update.snapshot.closed === true,
        created: now,
      });
      if (!duplicate) {
        const notice: RevisionNotice = { session_id: sessionId, revision: update.revision };
        this.nc.publish(this.subjects.sessionRevision(sessionId), encodeJson(notice));
      }
      // After the row is stored: a failure here fails the update, and the edge's retry
      // republishes through the duplicate path above.
      await this.lifecycle.publishRow(
        {
          session_id: sessionId,
          edge_id: update.edge_id,
          actor_id: update.actor_id,
          ...(update.access_id ? { access_id: update.access_id } : {}),
          epoch: head.epoch,
          sequence,
          at: now,
        },
        update.snapshot,
        outcome.streamSequence,
        head.streamSequence,
      );
      return { ok: true, epoch: head.epoch, sequence, duplicate };
    }
    throw new JournalContendedError(sessionId);
  }

  /**
   * Rebuilds the head from the subject's last message and caches it. A last message that does
   * not carry a sequence (unreadable, or written before sequences existed) cannot continue its
   * epoch, and no message at all means nothing to continue: both start a new epoch at sequence 0,
   * still chained to the subject's stream sequence so appends stay serialized.
   */
  private async reseed(sessionId: string): Promise<JournalHead> {
    const last = await this.stream.last(sessionId);
    const entry = last?.entry;
    const head: JournalHead =
      last && entry && entry.sequence !== undefined
        ? {
            epoch: entry.epoch,
            sequence: entry.sequence,
            streamSequence: last.streamSequence,
            revision: entry.revision,
          }
        : {
            epoch: newEpoch(),
            sequence: 0,
            streamSequence: last?.streamSequence ?? 0,
            revision: entry?.revision ?? null,
          };
    if (last && (!entry || entry.sequence === undefined)) {
      this.log.warn(`Journal of session ${sessionId} cannot be continued; rolled to epoch ${head.epoch}.`);
    }
    await this.repository.advance(sessionId, head);
    // Another replica may have cached a newer head meanwhile; the cache (forward-only) decides.
    return (await this.repository.state(sessionId)).head ?? head;
  }
}
