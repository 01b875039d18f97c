import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { requestSchemas, type SessionUpdateAck, type Subjects } from '#contracts';
import { parsePayload } from '#messaging';
import { SUBJECTS } from '../common/tokens.js';
import { SessionUpdateService } from './session-update.service.js';

@Controller()
export class SessionUpdateHandler {
  constructor(
    @Inject(SUBJECTS) private readonly subjects: Subjects,
    private readonly service: SessionUpdateService,
  ) {}

  @MessagePattern('routerSessionUpdate')
  record(@Payload() payload: unknown): Promise<SessionUpdateAck> {
    const update = parsePayload(
      this.subjects.requests.routerSessionUpdate,
      requestSchemas.routerSessionUpdate,
      payload,
    );
    return this.service.record(update);
  }
}
