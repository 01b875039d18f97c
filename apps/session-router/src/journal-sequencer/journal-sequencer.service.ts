import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { RedisClient } from '../common/redis-client.js';
import {
  type EdgeAgentResult,
  type JournalSubmissionEntry,
  type RevisionNotice,
  type SessionUpdate,
  type SessionUpdateAck,
  type Submission,
} from '#contracts';
import { ServiceError, encodeJson, JournalCipher, NatsBus } from '#messaging';
import type { RouterConfig } from '../config.js';
import { EdgeCredentialsRefusedError, InvalidSessionIdError, SessionScopeError } from '../common/errors.js';
import { SESSION_ID_PATTERN } from '../common/limits.js';
import { EdgeCredentials } from '../common/edge-credentials.js';
import { REDIS, ROUTER_CONFIG } from '../common/tokens.js';
import { JournalAppendLock } from './journal-append-lock.js';
import { JournaledSnapshots } from './journaled-snapshots.js';
import { journalEntry, journalMsgId, submissionMsgId } from './journal-entry.js';
import { JournalStream } from './journal-stream.js';
import { LifecyclePublisher, type CachedRead } from './lifecycle.js';
import { RuntimeFenceRepository } from './runtime-fence.repository.js';
import { JournalSequencerRepository, type JournalHead } from './journal-sequencer.repository.js';

/** The fence of a session whose journal names none (new, or written before fences existed). */
const FIRST_FENCE = 1;

/** Who a router-written row belongs to (the session's scope, as its edge rows carry it). */
export interface SubmissionScope {
  session_id: string;
  edge_id: string;
  actor_id: string;
  access_id?: string;
}

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
 * The single sequencer of every session's journal (docs/architecture.md invariants 1–3). An edge's
 * update becomes row `(epoch, sequence + 1)`, appended to JetStream only if the subject's last stream
 * sequence is still the one the head names; the edge is acknowledged only after JetStream stored
 * it; Redis then caches the new head and watchers on every replica are woken. Redis is a cache:
 * a missing head is re-seeded from the subject's last message, and when that cannot say where
 * the sequence stands, a new epoch starts (clients get `epoch_changed`, never a silent gap).
 */
@Injectable()
export class JournalSequencerService {
  private readonly log = new Logger(JournalSequencerService.name);
  private readonly lifecycle: LifecyclePublisher;

  constructor(
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    private readonly bus: NatsBus,
    private readonly repository: JournalSequencerRepository,
    private readonly stream: JournalStream,
    private readonly fences: RuntimeFenceRepository,
    @Inject(REDIS) redis: RedisClient,
    private readonly credentials: EdgeCredentials,
    cipher: JournalCipher,
    private readonly appendLock: JournalAppendLock,
    private readonly snapshots: JournaledSnapshots,
  ) {
    this.lifecycle = new LifecyclePublisher(bus, redis, cipher);
  }

  async record(update: SessionUpdate): Promise<SessionUpdateAck> {
    const sessionId = update.session_id;
    if (!(await this.credentials.verify(update.edge_id, update.edge_token))) {
      this.log.warn(
        `Session update for session ${sessionId} from edge ${update.edge_id} refused: bad edge token.`,
      );
      throw new EdgeCredentialsRefusedError();
    }
    if (!SESSION_ID_PATTERN.test(sessionId)) throw new InvalidSessionIdError();
    return this.store(update);
  }

  /**
   * The edge's state as the router itself read it first-hand (the windowed send's snapshot),
   * journaled like the edge's own update of that revision. A send resets the edge's display
   * window; the window's final state must be in the journal before that. The edge's own update of
   * it may have died with a router that never acked it, and the edge retries with its newest
   * state only, so without this the round would never reach the journal. A revision the journal
   * already holds is acknowledged as a duplicate (the usual case: one Redis read).
   */
  async recordObserved(scope: SubmissionScope, snapshot: EdgeAgentResult): Promise<SessionUpdateAck> {
    if (!SESSION_ID_PATTERN.test(scope.session_id)) throw new InvalidSessionIdError();
    return this.store({
      edge_id: scope.edge_id,
      // Never checked on this path: the router read the state from the edge itself.
      edge_token: '',
      actor_id: scope.actor_id,
      ...(scope.access_id ? { access_id: scope.access_id } : {}),
      session_id: scope.session_id,
      revision: snapshot.revision ?? 0,
      emitted_at: Date.now(),
      snapshot,
    });
  }

  /**
   * What a send of a saved session needs from the journal, read without a lock: the edge
   * revision of the last journaled row (0: none yet), the revision it may ask the edge to roll
   * its window at (a head written meanwhile only makes it older, and the edge refuses to roll on
   * an older revision than its own unless it knows the newer one journaled); and whether the
   * session was deleted (`markDeleted`), all in one Redis round trip.
   */
  async sendStanding(sessionId: string): Promise<{ revision: number; deleted: boolean }> {
    const { head, deleted } = await this.repository.state(sessionId);
    if (head) return { revision: head.revision ?? 0, deleted };
    return { revision: (await this.stream.last(sessionId))?.entry?.revision ?? 0, deleted };
  }

  /**
   * Remembers that the session was deleted. An edge offline at the delete still holds the live
   * session when it returns; a send sees the mark, is refused and deletes that copy.
   */
  markDeleted(sessionId: string): Promise<void> {
    return this.repository.markDeleted(sessionId);
  }

  /**
   * The JetStream sequence of the session's last journal message (0: none), read without a lock:
   * a reader that waits for history to apply it sees everything journaled before it asked.
   */
  async journaledStreamSequence(sessionId: string): Promise<number> {
    const { head } = await this.repository.state(sessionId);
    if (head) return head.streamSequence;
    return (await this.stream.last(sessionId))?.streamSequence ?? 0;
  }

  private store(update: SessionUpdate): Promise<SessionUpdateAck> {
    const sessionId = update.session_id;
    return this.appendLock.holding(
      sessionId,
      () => new JournalContendedError(sessionId),
      () => this.storeLocked(update),
    );
  }

  private async storeLocked(update: SessionUpdate): Promise<SessionUpdateAck> {
    const sessionId = update.session_id;
    // Issued in the same turn as the state read: auto-pipelining sends both in one write.
    const lifecycleCache = this.lifecycle.prefetch(sessionId);
    const state = await this.repository.state(sessionId);
    const bound = await this.boundScope(sessionId, state);
    if (bound && (bound.edge !== update.edge_id || bound.owner !== update.actor_id)) {
      this.log.warn(
        `Session update for session ${sessionId} from edge ${update.edge_id} refused: scope mismatch.`,
      );
      throw new SessionScopeError(sessionId);
    }

    let head = state.head ?? (await this.reseed(sessionId));
    const fence = state.fence ?? (await this.runtimeFence(sessionId));
    for (let attempt = 0; attempt < APPEND_ATTEMPTS_MAX; attempt += 1) {
      // Already journaled (the head moves only after JetStream stored it): a retry, acknowledge again.
      if (head.revision !== null && head.revision >= update.revision) {
        // The retried row may have been stored without its lifecycle events (docs/events.md).
        if (head.revision === update.revision) {
          const last = await this.previousEdgeRow(head, state.edgeStreamSequence);
          await this.lifecycle.republishLast(sessionId, last, update.revision);
        }
        return { ok: true, epoch: head.epoch, sequence: head.sequence, duplicate: true };
      }
      const now = Date.now();
      const sequence = head.sequence + 1;
      const previousEdgeRow = await this.previousEdgeRow(head, state.edgeStreamSequence);
      const entry = {
        ...journalEntry(update, head.epoch, now),
        sequence,
        prev_stream_seq: head.streamSequence,
        fence,
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
      const stored = { epoch: head.epoch, sequence, streamSequence: outcome.streamSequence };
      return this.afterStored(update, stored, now, previousEdgeRow, lifecycleCache);
    }
    throw new JournalContendedError(sessionId);
  }

  /** A row JetStream stored: cache the new head, wake watchers, publish its lifecycle events. */
  private async afterStored(
    update: SessionUpdate,
    stored: { epoch: string; sequence: number; streamSequence: number },
    now: number,
    previousEdgeRow: number,
    lifecycleCache: CachedRead,
  ): Promise<SessionUpdateAck> {
    const sessionId = update.session_id;
    const { epoch, sequence } = stored;
    const next: JournalHead = { ...stored, revision: update.revision };
    const duplicate = await this.repository.advance(sessionId, next, {
      owner: update.actor_id,
      access: update.access_id ?? '',
      edge: update.edge_id,
      running: update.snapshot.running === true,
      closed: update.snapshot.closed === true,
      created: now,
    });
    if (!duplicate) {
      // Before the notice: a watch of this replica that it wakes answers with this very state.
      this.snapshots.offer(update);
      const notice: RevisionNotice = { session_id: sessionId, revision: update.revision };
      this.bus.nc.publish(this.bus.subjects.sessionRevision(sessionId), encodeJson(notice));
    }
    // After the row is stored: a failure here fails the update, and the edge's retry
    // republishes through the duplicate path of storeLocked.
    await this.lifecycle.publishRow(
      {
        session_id: sessionId,
        edge_id: update.edge_id,
        actor_id: update.actor_id,
        ...(update.access_id ? { access_id: update.access_id } : {}),
        epoch,
        sequence,
        at: now,
      },
      update.snapshot,
      stored.streamSequence,
      // The previous edge row: submission rows in between change no snapshot.
      previousEdgeRow,
      lifecycleCache,
    );
    return { ok: true, epoch, sequence, duplicate };
  }

  /**
   * Appends a row the router itself writes (a send's submission or its settlement) through the
   * same guard as an edge update: the next sequence of the head, stored only if the subject's
   * last stream sequence is still the head's. The row repeats the head's edge revision (it
   * changes no snapshot). A retry of the same state is deduplicated by its message id.
   */
  appendSubmission(scope: SubmissionScope, fence: number, submission: Submission): Promise<void> {
    const sessionId = scope.session_id;
    return this.appendLock.holding(
      sessionId,
      () => new JournalContendedError(sessionId),
      () => this.appendSubmissionLocked(scope, fence, submission),
    );
  }

  private async appendSubmissionLocked(
    scope: SubmissionScope,
    fence: number,
    submission: Submission,
  ): Promise<void> {
    const sessionId = scope.session_id;
    let head = (await this.repository.state(sessionId)).head ?? (await this.reseed(sessionId));
    for (let attempt = 0; attempt < APPEND_ATTEMPTS_MAX; attempt += 1) {
      const sequence = head.sequence + 1;
      const entry: JournalSubmissionEntry = {
        v: 1,
        kind: 'submission',
        session_id: sessionId,
        edge_id: scope.edge_id,
        actor_id: scope.actor_id,
        ...(scope.access_id ? { access_id: scope.access_id } : {}),
        epoch: head.epoch,
        revision: head.revision ?? 0,
        sequence,
        prev_stream_seq: head.streamSequence,
        fence,
        submission,
        recorded_at: Date.now(),
      };
      const outcome = await this.stream.append(
        entry,
        submissionMsgId(sessionId, head.epoch, submission.client_message_id, submission.dispatch_state),
        head.streamSequence,
      );
      // Stored earlier (a retry of this very row): JetStream kept the first copy.
      if (outcome.kind === 'duplicate') return;
      if (outcome.kind === 'moved') {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * APPEND_RETRY_JITTER_MS));
        head = await this.reseed(sessionId);
        continue;
      }
      await this.repository.advance(sessionId, {
        epoch: head.epoch,
        sequence,
        streamSequence: outcome.streamSequence,
        revision: head.revision,
      });
      return;
    }
    throw new JournalContendedError(sessionId);
  }

  /**
   * The last edge-update row at or before the head, which lifecycle events compare with: the
   * head itself unless submission rows follow the edge row Redis remembers (then the stream
   * says which row it is; no read in the common case).
   */
  private async previousEdgeRow(head: JournalHead, cachedEdgeRow: number | undefined): Promise<number> {
    if (head.streamSequence === 0 || cachedEdgeRow === head.streamSequence) return head.streamSequence;
    try {
      return await this.stream.edgeRowAtOrBefore(head.streamSequence);
    } catch (error) {
      this.log.warn(`Journal row ${head.streamSequence} unreadable: ${(error as Error).message}`);
      return head.streamSequence;
    }
  }

  /**
   * The owner and edge the session is bound to: Redis's meta, or, when Redis lost it (restart,
   * eviction, expiry), the journal's last row, never the update's own claim. Null only when the
   * journal holds no row either: a new session, bound by its first update. A journal that cannot
   * be read fails the update (the edge retries), so a lost cache is never taken as consent.
   */
  private async boundScope(
    sessionId: string,
    state: { owner?: string; edge?: string },
  ): Promise<{ owner: string; edge: string } | null> {
    if (state.owner && state.edge) return { owner: state.owner, edge: state.edge };
    const last = await this.stream.last(sessionId);
    if (!last) return null;
    if (!last.entry) {
      // A row we cannot read still says the session exists: nobody can prove it is theirs.
      this.log.warn(`Journal head of session ${sessionId} unreadable; its owner cannot be confirmed.`);
      return { owner: '', edge: '' };
    }
    return { owner: last.entry.actor_id, edge: last.entry.edge_id };
  }

  /** The session's runtime fence, re-seeded from the last journal row when Redis lost it. */
  async runtimeFence(sessionId: string): Promise<number> {
    const cached = await this.fences.cached(sessionId);
    if (cached !== null) return cached;
    return this.fences.seed(sessionId, await this.journalFence(sessionId));
  }

  /**
   * `start` created the session's first runtime: fence 1, unless one is already known. The start's
   * snapshot is journaled before the start is answered: the edge publishes its own update of it
   * asynchronously, and until a row (or the meta it caches) binds the session to its caller and
   * edge, an enveloped call on it would be refused as a session the router does not hold. The
   * edge's update of the same revision is then acknowledged as a duplicate.
   */
  async runtimeStarted(scope: SubmissionScope, snapshot: EdgeAgentResult): Promise<number> {
    await this.recordObserved(scope, snapshot);
    return this.runtimeFence(scope.session_id);
  }

  /** `resume` started a new runtime: the fence moves forward. */
  async runtimeRestarted(sessionId: string): Promise<number> {
    const cached = await this.fences.cached(sessionId);
    return this.fences.bump(sessionId, cached ?? (await this.journalFence(sessionId)));
  }

  private async journalFence(sessionId: string): Promise<number> {
    const last = await this.stream.last(sessionId);
    return last?.entry?.fence ?? FIRST_FENCE;
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
