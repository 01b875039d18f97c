import { Body, Controller, Get, HttpCode, Post, UseGuards } from '@nestjs/common';
import type { AgentConnector } from '#contracts';
import { AuthGuard, RequirePermissions } from '../auth/auth.guard.js';
import { Actor, type Principal } from '../auth/principal.js';
import { InvalidRequestError } from '../common/errors.js';
import { JsonBodyPipe } from '../common/json-body.js';
import { API_PREFIX, CONNECTORS_PATH } from '../common/routes.js';
import { enrollSchema, type EnrollInput } from './connectors.schemas.js';
import { ConnectorsService, type Enrollment } from './connectors.service.js';

@Controller(`${API_PREFIX}/${CONNECTORS_PATH}`)
@UseGuards(AuthGuard)
export class ConnectorsController {
  constructor(private readonly connectors: ConnectorsService) {}

  @Get()
  @RequirePermissions('connectors:update', 'ai.access.use')
  list(@Actor() principal: Principal): Promise<AgentConnector[]> {
    return this.connectors.list(principal.actorId);
  }

  @Post()
  @HttpCode(200)
  @RequirePermissions('connectors:update')
  enroll(
    @Actor() principal: Principal,
    @Body(new JsonBodyPipe<EnrollInput>(enrollSchema, () => new InvalidRequestError())) input: EnrollInput,
  ): Promise<Enrollment> {
    return this.connectors.enroll(principal.actorId, input);
  }
}
