import { Body, Controller, Headers, HttpCode, Post, UseGuards } from '@nestjs/common';
import { edgeAgentRequestSchema, type EdgeAgentRequest, type EdgeAgentResult } from '#contracts';
import { noteHttpAction, noteRequestService } from '#telemetry';
import { AuthGuard, RequirePermissions } from '../auth/auth.guard.js';
import { Actor, type Principal } from '../auth/principal.js';
import { ApiError, InvalidAgentRequestError } from '../common/errors.js';
import { ReceivedAt } from '../common/http-setup.js';
import { JsonBodyPipe } from '../common/json-body.js';
import { API_PREFIX, EDGE_AGENTS_PATH } from '../common/routes.js';
import { AuditPublisher } from './audit.publisher.js';
import { EdgeAgentsService } from './edge-agents.service.js';

@Controller(API_PREFIX)
@UseGuards(AuthGuard)
export class EdgeAgentsController {
  constructor(
    private readonly edgeAgents: EdgeAgentsService,
    private readonly audit: AuditPublisher,
  ) {}

  @Post(EDGE_AGENTS_PATH)
  @HttpCode(200)
  @RequirePermissions('connectors:update', 'ai.access.use')
  async act(
    @Actor() principal: Principal,
    @ReceivedAt() receivedAt: number,
    @Body(new JsonBodyPipe<EdgeAgentRequest>(edgeAgentRequestSchema, () => new InvalidAgentRequestError()))
    request: EdgeAgentRequest,
    @Headers('traceparent') traceparent: string | undefined,
  ): Promise<EdgeAgentResult> {
    noteHttpAction(request.action);
    let reply: EdgeAgentResult;
    try {
      reply = await this.edgeAgents.handle(principal, request);
    } catch (error) {
      // A refused call is audited too, by its HTTP status (never its message).
      this.audit.publish(
        principal.actorId,
        request,
        `http_${error instanceof ApiError ? error.status : 500}`,
        traceparent,
      );
      throw error;
    }
    this.audit.publish(principal.actorId, request, reply.status, traceparent);
    if (request.action !== 'send') return reply;
    // Everything the api spent on this send, up to encoding (reference §2.1).
    const requestServiceMs = Math.round(performance.now() - receivedAt);
    noteRequestService(requestServiceMs);
    return { ...reply, request_service_ms: requestServiceMs };
  }
}
