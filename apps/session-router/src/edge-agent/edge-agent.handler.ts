import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { requestSchemas, type EdgeAgentResult, type Subjects } from '#contracts';
import { parsePayload } from '#messaging';
import { SUBJECTS } from '../common/tokens.js';
import { EdgeAgentService } from './edge-agent.service.js';

@Controller()
export class EdgeAgentHandler {
  constructor(
    @Inject(SUBJECTS) private readonly subjects: Subjects,
    private readonly service: EdgeAgentService,
  ) {}

  /** An action the api has already authenticated and authorized. */
  @MessagePattern('routerEdgeAgent')
  route(@Payload() payload: unknown): Promise<EdgeAgentResult> {
    return this.service.route(
      parsePayload(this.subjects.requests.routerEdgeAgent, requestSchemas.routerEdgeAgent, payload),
    );
  }
}
