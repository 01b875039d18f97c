import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, UseGuards } from '@nestjs/common';
import type { AccessInput, AccessListReply, AgentAccess } from '#contracts';
import { AuthGuard, RequirePermissions } from '../auth/auth.guard.js';
import { Actor, type Principal } from '../auth/principal.js';
import { InvalidRequestError } from '../common/errors.js';
import { JsonBodyPipe } from '../common/json-body.js';
import { ACCESSES_PATH, API_PREFIX } from '../common/routes.js';
import { accessInputSchema } from './accesses.schemas.js';
import { AccessesService } from './accesses.service.js';

const accessBodyPipe = new JsonBodyPipe<AccessInput>(accessInputSchema, () => new InvalidRequestError());

@Controller(`${API_PREFIX}/${ACCESSES_PATH}`)
@UseGuards(AuthGuard)
@RequirePermissions('ai.access.use')
export class AccessesController {
  constructor(private readonly accesses: AccessesService) {}

  @Get()
  list(
    @Actor() principal: Principal,
    @Query('page') page: unknown,
    @Query('page_size') pageSize: unknown,
  ): Promise<AccessListReply> {
    return this.accesses.list(principal.actorId, page, pageSize);
  }

  @Post()
  @HttpCode(200)
  create(@Actor() principal: Principal, @Body(accessBodyPipe) access: AccessInput): Promise<AgentAccess> {
    return this.accesses.create(principal.actorId, access);
  }

  @Put(':id')
  update(
    @Actor() principal: Principal,
    @Param('id') id: string,
    @Body(accessBodyPipe) access: AccessInput,
  ): Promise<AgentAccess> {
    return this.accesses.update(principal.actorId, id, access);
  }

  @Delete(':id')
  remove(@Actor() principal: Principal, @Param('id') id: string): Promise<AgentAccess> {
    return this.accesses.remove(principal.actorId, id);
  }
}
