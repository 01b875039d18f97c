import { Injectable } from '@nestjs/common';
import {
  isEdgeId,
  isOpaqueId,
  JOURNAL_DIRECTIONS,
  Limits,
  type HistoryJournalPageReply,
  type JournalCursor,
  type JournalDirection,
} from '#contracts';
import type { Principal } from '../auth/principal.js';
import { Authorizer } from '../common/authorizer.js';
import { AccessNotFoundError, InvalidRequestError, UnauthorizedError } from '../common/errors.js';
import { ServiceClient } from '../common/service-client.js';

/** The session a caller reads: ids already checked, access not yet authorized. */
export interface SessionScope {
  sessionId: string;
  edgeId: string;
  accessId: string;
}

export interface PageQuery {
  direction: JournalDirection;
  cursor?: JournalCursor;
  limit: number;
}

const LIMIT_PATTERN = /^[0-9]{1,4}$/;
/** `<epoch>:<sequence>`; the epoch is opaque, so the last colon separates them. */
const CURSOR_MAX_LENGTH = Limits.EPOCH_MAX_LENGTH + 21;

/** Parses the opaque query cursor; null when it is not one. */
export function parseCursor(raw: string): JournalCursor | null {
  if (raw.length === 0 || raw.length > CURSOR_MAX_LENGTH) return null;
  const colon = raw.lastIndexOf(':');
  const epoch = raw.slice(0, colon);
  const sequence = raw.slice(colon + 1);
  if (colon < 1 || !/^(0|[1-9][0-9]{0,15})$/.test(sequence)) return null;
  const value = Number(sequence);
  return Number.isSafeInteger(value) ? { epoch, sequence: value } : null;
}

export function formatCursor(cursor: JournalCursor): string {
  return `${cursor.epoch}:${cursor.sequence}`;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Reads of one session's structured journal for its owner (paging and the SSE stream). */
@Injectable()
export class SessionsService {
  /** Page reads in flight, by their exact request (see `page`). */
  private readonly pagesInFlight = new Map<string, Promise<HistoryJournalPageReply>>();

  constructor(
    private readonly services: ServiceClient,
    private readonly authorizer: Authorizer,
  ) {}

  scope(sessionId: string, edgeId: unknown, accessId: unknown): SessionScope {
    const edge = text(edgeId);
    const access = text(accessId);
    if (!isOpaqueId(sessionId) || !edge || !isEdgeId(edge) || !access || !isOpaqueId(access)) {
      throw new InvalidRequestError('session id, edge_id or access_id is malformed');
    }
    return { sessionId, edgeId: edge, accessId: access };
  }

  /** Direction, cursor and limit from the query: the limit is strict here (1..200), never clamped. */
  pageQuery(direction: unknown, cursor: unknown, limit: unknown): PageQuery {
    const dir = text(direction) ?? 'tail';
    if (!(JOURNAL_DIRECTIONS as readonly string[]).includes(dir))
      throw new InvalidRequestError('bad direction');
    const rawLimit = text(limit);
    let value: number = Limits.JOURNAL_PAGE_DEFAULT_LIMIT;
    if (limit !== undefined) {
      if (rawLimit === undefined || !LIMIT_PATTERN.test(rawLimit)) throw new InvalidRequestError('bad limit');
      value = Number(rawLimit);
      if (value < 1 || value > Limits.JOURNAL_PAGE_MAX_LIMIT)
        throw new InvalidRequestError('limit out of range');
    }
    const query: PageQuery = { direction: dir as JournalDirection, limit: value };
    if (cursor !== undefined) {
      const parsed = typeof cursor === 'string' ? parseCursor(cursor) : null;
      if (!parsed) throw new InvalidRequestError('bad cursor');
      query.cursor = parsed;
    }
    return query;
  }

  /**
   * The connector is the actor's and the access is the actor's for this edge (else 404). History
   * is always asked. Only an open stream's periodic re-check (`standIn`) lets history's recent
   * "yes" stand in while history cannot answer at all, as an edge call does (common/authorizer.ts):
   * a stream that was authorized is not cut off by an outage or a swamped history, but one that
   * opens or reads a page needs history anyway.
   */
  async authorize(
    principal: Principal,
    scope: SessionScope,
    options: { standIn?: boolean } = {},
  ): Promise<void> {
    if (Date.now() >= principal.expiresAt) throw new UnauthorizedError('Token expired.');
    const reply = await this.authorizer.authorize(
      { actorId: principal.actorId, edgeId: scope.edgeId, accessId: scope.accessId },
      { fresh: true, standIn: options.standIn ?? false },
    );
    const access = reply.access;
    if (!access || access.id !== scope.accessId || access.edge_id !== scope.edgeId) {
      throw new AccessNotFoundError(`Access ${scope.accessId} does not match edge ${scope.edgeId}.`);
    }
  }

  /**
   * One page, scoped by (owner, access, edge, session): someone else's session is not found.
   * Identical reads in flight at once share history's answer: every SSE stream of a session
   * wakes on the same commit notice and asks for the same `after` page from the same cursor, so
   * N streams of one owner cost one history read per notice instead of N. Only reads of the same
   * owner with the same query are shared; none is reused once answered.
   */
  page(principal: Principal, scope: SessionScope, query: PageQuery): Promise<HistoryJournalPageReply> {
    const request = {
      actor_id: principal.actorId,
      access_id: scope.accessId,
      edge_id: scope.edgeId,
      session_id: scope.sessionId,
      direction: query.direction,
      ...(query.cursor ? { cursor: query.cursor } : {}),
      limit: query.limit,
    };
    const key = JSON.stringify(request);
    const inFlight = this.pagesInFlight.get(key);
    if (inFlight) return inFlight;
    const reply = this.services.history('historyJournalPage', request).finally(() => {
      this.pagesInFlight.delete(key);
    });
    this.pagesInFlight.set(key, reply);
    return reply;
  }
}
