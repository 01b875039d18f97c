import { Catch, Injectable, type ArgumentsHost } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PRINCIPAL, type AuthenticatedRequest } from '../auth/principal.js';
import { ApiExceptionFilter } from '../common/api-exception.filter.js';
import { TooManyRequestsError } from '../common/errors.js';
import { decodeJsonBody } from '../common/json-body.js';
import { AuditPublisher } from './audit.publisher.js';

/**
 * The edge-agents route's error filter: answers like every other route (ApiExceptionFilter), then
 * audits the refusal of an authenticated caller with what its body let us decode, whatever
 * refused it (permissions, a malformed body or id, ownership, the router). It sits here, not in
 * the handler, because a body the pipe refuses never reaches the handler. A caller that did not
 * authenticate is not audited: nobody can be named, and anyone could fill the table with them.
 */
@Catch()
@Injectable()
export class AuditRefusalFilter extends ApiExceptionFilter {
  constructor(private readonly audit: AuditPublisher) {
    super();
  }

  override catch(exception: unknown, host: ArgumentsHost): void {
    super.catch(exception, host);
    // A call over a limit is not audited: a flood would otherwise be copied into the audit table,
    // one row per refused call, the very cost the limit keeps away.
    if (exception instanceof TooManyRequestsError) return;
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest & AuthenticatedRequest>();
    const principal = request[PRINCIPAL];
    if (!principal) return;
    const decoded = decodeJsonBody(request.body);
    const traceparent = request.headers.traceparent;
    this.audit.publishRefused(
      principal.actorId,
      decoded.ok ? decoded.value : undefined,
      `http_${http.getResponse<FastifyReply>().statusCode}`,
      typeof traceparent === 'string' ? traceparent : undefined,
    );
  }
}
