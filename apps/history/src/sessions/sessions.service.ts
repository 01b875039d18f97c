import { Injectable } from '@nestjs/common';
import {
  Limits,
  type HistorySessionsReply,
  type HistorySessionsRequest,
  type SessionSummary,
} from '#contracts';
import { InvalidRequestError } from '../common/errors.js';
import { parseEdgeId, requireActorId } from '../common/ids.js';
import { SessionsRepository, type StoredSessionSummary } from './sessions.repository.js';

function stringField(payload: unknown, key: string): string | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const value = (payload as Record<string, unknown>)[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * A stored row is presumed closed unless it says it is running or open (reference §2.3
 * sessions, step 5); the router overlays what the edge reports live.
 */
function toSummary(row: StoredSessionSummary): SessionSummary {
  const open = row.running || !row.closed;
  const summary: SessionSummary = {
    session_id: row.sessionId,
    updated_at: row.updatedAt.toISOString(),
    running: open ? row.running : false,
    closed: open ? row.closed : true,
    status: open ? row.status : 'session_closed',
  };
  const title = row.titleOverride ?? row.title;
  if (title) summary.title = title;
  const threadId = stringField(row.payload, 'thread_id');
  if (threadId) summary.thread_id = threadId;
  const project = stringField(row.payload, 'project');
  if (project) summary.project = project;
  return summary;
}

@Injectable()
export class SessionsService {
  constructor(private readonly sessions: SessionsRepository) {}

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
    const { rows, total } = await this.sessions.listPage(
      { ownerId, accessId: request.access_id, edgeId },
      (page - 1) * Limits.SESSIONS_PAGE_SIZE,
      Limits.SESSIONS_PAGE_SIZE,
    );
    return { sessions: rows.map(toSummary), total };
  }
}
