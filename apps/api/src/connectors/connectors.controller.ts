import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import type { AgentConnector, ConnectorRecord } from '#contracts';
import { AuthGuard, RequirePermissions } from '../auth/auth.guard.js';
import { Actor, type Principal } from '../auth/principal.js';
import type { Page } from '../common/envelope.interceptor.js';
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
  list(
    @Actor() principal: Principal,
    @Query('cursor') cursor: unknown,
    @Query('limit') limit: unknown,
  ): Promise<Page<AgentConnector[]>> {
    return this.connectors.list(principal.actorId, cursor, limit);
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

  /** New credentials for the caller's connector; the old token and NATS user stop working. */
  @Post(':id/credentials')
  @HttpCode(200)
  @RequirePermissions('connectors:update')
  rotate(@Actor() principal: Principal, @Param('id') id: string): Promise<Enrollment> {
    return this.connectors.rotate(principal.actorId, id);
  }

  /** Deletes the caller's connector and its accesses, and revokes its credentials. */
  @Delete(':id')
  @RequirePermissions('connectors:update')
  remove(@Actor() principal: Principal, @Param('id') id: string): Promise<ConnectorRecord> {
    return this.connectors.remove(principal.actorId, id);
  }
}
