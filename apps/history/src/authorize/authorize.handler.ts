import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { requestSchemas, type AuthorizeReply } from '#contracts';
import { parsePayload } from '#messaging';
import { AuthorizeService } from './authorize.service.js';

@Controller()
export class AuthorizeHandler {
  constructor(private readonly authorizer: AuthorizeService) {}

  @MessagePattern('historyAuthorize')
  authorize(@Payload() payload: unknown): Promise<AuthorizeReply> {
    return this.authorizer.authorize(
      parsePayload('historyAuthorize', requestSchemas.historyAuthorize, payload),
    );
  }
}
