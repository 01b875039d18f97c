import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { API_PREFIX, OPENAPI_DOCUMENT_PATH, OPENAPI_PAGE_PATH } from '../common/routes.js';
import { OpenApiService } from './openapi.service.js';

/**
 * The document and its page, without authentication. Both are sent as they are, outside the
 * success envelope (`@Res()`); Cache-Control: no-store comes from the hook every response gets.
 */
@Controller(API_PREFIX)
export class OpenApiController {
  constructor(private readonly openApi: OpenApiService) {}

  @Get(OPENAPI_DOCUMENT_PATH)
  document(@Res() reply: FastifyReply): void {
    void reply.type('application/json; charset=utf-8').send(this.openApi.documentJson);
  }

  @Get(OPENAPI_PAGE_PATH)
  page(@Res() reply: FastifyReply): void {
    void reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', this.openApi.page.contentSecurityPolicy)
      .header('x-content-type-options', 'nosniff')
      .send(this.openApi.page.html);
  }
}
