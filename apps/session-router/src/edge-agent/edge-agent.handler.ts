import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { requestSchemas, type EdgeAgentResult } from '#contracts';
import { parsePayload, NatsBus } from '#messaging';
import { EdgeAgentService } from './edge-agent.service.js';

@Controller()
export class EdgeAgentHandler {
  constructor(
    private readonly bus: NatsBus,
    private readonly service: EdgeAgentService,
  ) {}

  /** An action the api has already authenticated and authorized. */
  @MessagePattern('routerEdgeAgent')
  route(@Payload() payload: unknown): Promise<EdgeAgentResult> {
    return this.service.route(
      parsePayload(this.bus.subjects.requests.routerEdgeAgent, requestSchemas.routerEdgeAgent, payload),
    );
  }
}
