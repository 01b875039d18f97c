import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import { edgeAgentRequestSchema, type EdgeAgentRequest, type EdgeAgentResult } from '#contracts';
import { AuthGuard, RequirePermissions } from '../auth/auth.guard.js';
import { Actor, type Principal } from '../auth/principal.js';
import { InvalidAgentRequestError } from '../common/errors.js';
import { ReceivedAt } from '../common/http-setup.js';
import { JsonBodyPipe } from '../common/json-body.js';
import { API_PREFIX, EDGE_AGENTS_PATH } from '../common/routes.js';
import { EdgeAgentsService } from './edge-agents.service.js';

@Controller(API_PREFIX)
@UseGuards(AuthGuard)
export class EdgeAgentsController {
  constructor(private readonly edgeAgents: EdgeAgentsService) {}

  @Post(EDGE_AGENTS_PATH)
  @HttpCode(200)
  @RequirePermissions('connectors:update', 'ai.access.use')
  async act(
    @Actor() principal: Principal,
    @ReceivedAt() receivedAt: number,
    @Body(new JsonBodyPipe<EdgeAgentRequest>(edgeAgentRequestSchema, () => new InvalidAgentRequestError()))
    request: EdgeAgentRequest,
  ): Promise<EdgeAgentResult> {
    const reply = await this.edgeAgents.handle(principal, request);
    if (request.action !== 'send') return reply;
    // Everything the api spent on this send, up to encoding (reference §2.1).
    return { ...reply, request_service_ms: Math.round(performance.now() - receivedAt) };
  }
}
