import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  verifyEdgeToken,
  type RevisionNotice,
  type SessionUpdate,
  type SessionUpdateAck,
  type Subjects,
} from '#contracts';
import { NATS_CONNECTION, encodeJson, ensureSessionsStream, traceHeaders } from '#messaging';
import type { RouterConfig } from '../config.js';
import { EdgeCredentialsRefusedError, InvalidSessionIdError, SessionScopeError } from '../common/errors.js';
import { SESSION_ID_PATTERN } from '../common/limits.js';
import { ROUTER_CONFIG, SUBJECTS } from '../common/tokens.js';
import { journalEntry, journalMsgId } from './journal-entry.js';
import { SessionUpdateRepository } from './session-update.repository.js';

/** How long the router waits for JetStream to store a journal entry before the edge retries. */
const JOURNAL_PUBLISH_TIMEOUT_MS = 5_000;
/** A new epoch: 16 random bytes, hex. */
const EPOCH_BYTES = 16;

/**
 * Sequences one session's journal: an edge's update is stored in JetStream first and acknowledged
 * only then (ARCHITECTURE invariant 3); Redis follows, and watchers on every replica are woken.
 */
@Injectable()
export class SessionUpdateService implements OnModuleInit {
  private readonly log = new Logger(SessionUpdateService.name);
  private js!: JetStreamClient;

  constructor(
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SUBJECTS) private readonly subjects: Subjects,
    private readonly repository: SessionUpdateRepository,
  ) {}

  async onModuleInit(): Promise<void> {
    await ensureSessionsStream(this.nc, this.subjects);
    this.js = jetstream(this.nc);
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
    const epoch =
      state.epoch ?? (await this.repository.ensureEpoch(sessionId, randomBytes(EPOCH_BYTES).toString('hex')));
    // Already journaled (Redis moves only after JetStream stored it): a retry, acknowledge again.
    if (state.revision !== null && state.revision >= update.revision) {
      return { ok: true, epoch, sequence: update.revision, duplicate: true };
    }

    const now = Date.now();
    await this.js.publish(
      this.subjects.sessionJournal(sessionId),
      encodeJson(journalEntry(update, epoch, now)),
      {
        msgID: journalMsgId(sessionId, epoch, update.revision),
        timeout: JOURNAL_PUBLISH_TIMEOUT_MS,
        headers: traceHeaders(),
      },
    );
    const duplicate = await this.repository.commit(sessionId, update.revision, {
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
    return { ok: true, epoch, sequence: update.revision, duplicate };
  }
}
