import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { requestSchemas, type HistorySessionsReply } from '#contracts';
import { parsePayload } from '#messaging';
import { SessionsService } from './sessions.service.js';

@Controller()
export class SessionsHandler {
  constructor(private readonly sessions: SessionsService) {}

  @MessagePattern('historySessions')
  list(@Payload() payload: unknown): Promise<HistorySessionsReply> {
    return this.sessions.list(parsePayload('historySessions', requestSchemas.historySessions, payload));
  }
}
