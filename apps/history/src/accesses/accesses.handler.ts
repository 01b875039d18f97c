import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { requestSchemas, type AccessListReply, type AccessReply } from '#contracts';
import { parsePayload } from '#messaging';
import { AccessesService } from './accesses.service.js';

@Controller()
export class AccessesHandler {
  constructor(private readonly accesses: AccessesService) {}

  @MessagePattern('historyAccessList')
  list(@Payload() payload: unknown): Promise<AccessListReply> {
    return this.accesses.list(parsePayload('historyAccessList', requestSchemas.historyAccessList, payload));
  }

  @MessagePattern('historyAccessCreate')
  create(@Payload() payload: unknown): Promise<AccessReply> {
    return this.accesses.create(
      parsePayload('historyAccessCreate', requestSchemas.historyAccessCreate, payload),
    );
  }

  @MessagePattern('historyAccessUpdate')
  update(@Payload() payload: unknown): Promise<AccessReply> {
    return this.accesses.update(
      parsePayload('historyAccessUpdate', requestSchemas.historyAccessUpdate, payload),
    );
  }

  @MessagePattern('historyAccessDelete')
  delete(@Payload() payload: unknown): Promise<AccessReply> {
    return this.accesses.delete(
      parsePayload('historyAccessDelete', requestSchemas.historyAccessDelete, payload),
    );
  }
}
