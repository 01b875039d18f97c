import { Body, Controller, Headers, HttpCode, Post, UseFilters, UseGuards } from '@nestjs/common';
import { edgeAgentRequestSchema, type EdgeAgentRequest, type EdgeAgentResult } from '#contracts';
import { noteHttpAction, noteRequestService } from '#telemetry';
import { AuthGuard, RequirePermissions } from '../auth/auth.guard.js';
import { Actor, type Principal } from '../auth/principal.js';
import { InvalidAgentRequestError } from '../common/errors.js';
import { ReceivedAt } from '../common/http-setup.js';
import { JsonBodyPipe } from '../common/json-body.js';
import { API_PREFIX, EDGE_AGENTS_PATH } from '../common/routes.js';
import { AuditRefusalFilter } from './audit-refusal.filter.js';
import { AuditPublisher } from './audit.publisher.js';
import { EdgeAgentsService } from './edge-agents.service.js';

@Controller(API_PREFIX)
@UseGuards(AuthGuard)
// Every refusal of this route is audited, the body's own included (docs/contract.md "Audit").
@UseFilters(AuditRefusalFilter)
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
    // A refused call is audited by AuditRefusalFilter, by its HTTP status (never its message).
    const reply = await this.edgeAgents.handle(principal, request);
    this.audit.publish(principal.actorId, request, reply.status, traceparent);
    if (request.action !== 'send') return reply;
    // Everything the api spent on this send, up to encoding (reference §2.1).
    const requestServiceMs = Math.round(performance.now() - receivedAt);
    noteRequestService(requestServiceMs);
    return { ...reply, request_service_ms: requestServiceMs };
  }
}
