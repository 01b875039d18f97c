import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { requestSchemas, type HistoryOpenSubmissionsReply } from '#contracts';
import { parsePayload } from '#messaging';
import { OpenSubmissionsRepository } from './open-submissions.repository.js';

@Controller()
export class OpenSubmissionsHandler {
  constructor(private readonly submissions: OpenSubmissionsRepository) {}

  @MessagePattern('historyOpenSubmissions')
  async list(@Payload() payload: unknown): Promise<HistoryOpenSubmissionsReply> {
    const request = parsePayload('historyOpenSubmissions', requestSchemas.historyOpenSubmissions, payload);
    return { submissions: await this.submissions.list(request) };
  }
}
