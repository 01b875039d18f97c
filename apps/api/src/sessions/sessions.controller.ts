import { Controller, Get, Headers, Inject, Param, Query, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Limits, type HistoryJournalPageReply } from '#contracts';
import { NatsBus } from '#messaging';
import { AuthGuard, RequirePermissions } from '../auth/auth.guard.js';
import { Actor, type Principal } from '../auth/principal.js';
import { InvalidRequestError } from '../common/errors.js';
import { API_PREFIX, SESSIONS_PATH } from '../common/routes.js';
import { API_CONFIG } from '../common/tokens.js';
import {
  SSE_HEARTBEAT_DEFAULT_MS,
  SSE_REAUTHORIZE_DEFAULT_MS,
  type ApiConfig,
  type SseConfig,
} from '../config.js';
import { UserLimits } from '../limits/user-limits.service.js';
import { JournalEventStream } from './journal-events.stream.js';
import { JournalStreams } from './journal-streams.js';
import { SharedSubscriptions } from './shared-subscriptions.js';
import { parseCursor, SessionsService } from './sessions.service.js';

@Controller(`${API_PREFIX}/${SESSIONS_PATH}`)
@UseGuards(AuthGuard)
@RequirePermissions('ai.access.use')
export class SessionsController {
  private readonly sse: SseConfig;

  constructor(
    private readonly sessions: SessionsService,
    private readonly streams: JournalStreams,
    private readonly feeds: SharedSubscriptions,
    private readonly bus: NatsBus,
    @Inject(API_CONFIG) config: ApiConfig,
    private readonly limits: UserLimits,
  ) {
    this.sse = config.sse ?? {
      heartbeatMs: SSE_HEARTBEAT_DEFAULT_MS,
      reauthorizeMs: SSE_REAUTHORIZE_DEFAULT_MS,
    };
  }

  /** One page of the session's journal: `tail`, `before` a cursor or `after` one. */
  @Get(':id/history')
  async history(
    @Actor() principal: Principal,
    @Param('id') id: string,
    @Query('edge_id') edgeId: unknown,
    @Query('access_id') accessId: unknown,
    @Query('direction') direction: unknown,
    @Query('cursor') cursor: unknown,
    @Query('limit') limit: unknown,
  ): Promise<HistoryJournalPageReply> {
    const scope = this.sessions.scope(id, edgeId, accessId);
    const query = this.sessions.pageQuery(direction, cursor, limit);
    await this.sessions.authorize(principal, scope);
    return this.sessions.page(principal, scope, query);
  }

  /**
   * The live journal as Server-Sent Events, resumable from `Last-Event-ID` (or `?cursor=`). Bad
   * input and a refused caller are answered as plain errors before the stream opens.
   */
  @Get(':id/events')
  async events(
    @Actor() principal: Principal,
    @Param('id') id: string,
    @Query('edge_id') edgeId: unknown,
    @Query('access_id') accessId: unknown,
    @Query('cursor') queryCursor: unknown,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const scope = this.sessions.scope(id, edgeId, accessId);
    const raw = lastEventId ?? (typeof queryCursor === 'string' ? queryCursor : undefined);
    const cursor = raw === undefined ? undefined : parseCursor(raw);
    if (cursor === null || (queryCursor !== undefined && typeof queryCursor !== 'string')) {
      throw new InvalidRequestError('bad cursor');
    }
    // Held from here until the connection closes; over the user's (or the edge's) bound: 429,
    // before history is asked anything, so a flood of streams costs history nothing.
    const release = this.limits.openStream(principal.actorId, scope.edgeId);
    let first: HistoryJournalPageReply;
    try {
      await this.sessions.authorize(principal, scope);
      // The first read happens before the response is committed: an unknown (or someone else's)
      // session is a plain 404, not an empty stream. Without a cursor it answers with the snapshot.
      first = await this.sessions.page(principal, scope, {
        direction: 'after',
        ...(cursor ? { cursor } : {}),
        limit: Limits.JOURNAL_PAGE_MAX_LIMIT,
      });
    } catch (error) {
      release();
      throw error;
    }
    reply.raw.on('close', release);
    reply.hijack();
    const stream = new JournalEventStream(
      this.sessions,
      this.feeds,
      this.bus.subjects,
      principal,
      scope,
      reply.raw,
      this.sse,
    );
    const forget = this.streams.add(stream);
    reply.raw.on('close', forget);
    stream.open(cursor, first);
  }
}
