import { Injectable, Logger } from '@nestjs/common';
import {
  Limits,
  type HistorySessionsReply,
  type HistorySessionsRequest,
  type SessionSummary,
} from '#contracts';
import { InvalidRequestError } from '../common/errors.js';
import { Aad, HistoryCipher, HistoryDecryptError } from '../common/history-cipher.js';
import { parseEdgeId, requireActorId } from '../common/ids.js';
import type { SessionSummaryValue } from '../common/stored-session.js';
import { SessionsRepository, type SessionScope, type StoredSessionSummary } from './sessions.repository.js';

/**
 * A stored row is presumed closed unless it says it is running or open (reference §2.3
 * sessions, step 5); the router overlays what the edge reports live.
 */
function toSummary(
  row: StoredSessionSummary,
  stored: SessionSummaryValue,
  titleOverride: string | null,
): SessionSummary {
  const open = row.running || !row.closed;
  const summary: SessionSummary = {
    session_id: row.sessionId,
    updated_at: row.updatedAt.toISOString(),
    running: open ? row.running : false,
    closed: open ? row.closed : true,
    status: open ? row.status : 'session_closed',
  };
  const title = titleOverride ?? stored.title;
  if (title) summary.title = title;
  if (stored.thread_id) summary.thread_id = stored.thread_id;
  if (stored.project) summary.project = stored.project;
  return summary;
}

@Injectable()
export class SessionsService {
  private readonly log = new Logger(SessionsService.name);

  constructor(
    private readonly sessions: SessionsRepository,
    private readonly cipher: HistoryCipher,
  ) {}

  async list(request: HistorySessionsRequest): Promise<HistorySessionsReply> {
    const ownerId = requireActorId(request.actor_id);
    // proto3: an omitted page (0) is the first one.
    const page = request.page === undefined || request.page === 0 ? 1 : request.page;
    if (!Number.isInteger(page) || page < 1 || page > Limits.HISTORY_PAGE_MAX) {
      throw new InvalidRequestError(`page must be an integer from 1 to ${Limits.HISTORY_PAGE_MAX}.`);
    }
    const edgeId = parseEdgeId(request.edge_id);
    if (edgeId === null || typeof request.access_id !== 'string' || request.access_id === '') {
      // Nothing can be stored under a scope that cannot exist.
      return { sessions: [], total: 0 };
    }
    const scope = { ownerId, accessId: request.access_id, edgeId };
    const { rows, total } = await this.sessions.listPage(
      scope,
      (page - 1) * Limits.SESSIONS_PAGE_SIZE,
      Limits.SESSIONS_PAGE_SIZE,
    );
    return { sessions: rows.map((row) => this.summaryOf(scope, row)), total };
  }

  /** A row that does not decrypt (wrong key, copied row) is listed without its content. */
  private summaryOf(scope: SessionScope, row: StoredSessionSummary): SessionSummary {
    const key = { ...scope, sessionId: row.sessionId };
    try {
      const stored = row.summary
        ? this.cipher.decryptJson<SessionSummaryValue>(row.summary, Aad.summary(key))
        : {};
      const title = row.titleOverride ? this.cipher.decrypt(row.titleOverride, Aad.title(key)) : null;
      return toSummary(row, stored, title);
    } catch (error) {
      if (!(error instanceof HistoryDecryptError)) throw error;
      this.log.error(error.message);
      return toSummary(row, {}, null);
    }
  }
}
