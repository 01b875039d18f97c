import { randomUUID } from 'node:crypto';
import {
  Catch,
  HttpException,
  Logger,
  NotFoundException,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RpcErrorCode } from '#contracts';
import { RpcRemoteError, RpcUnavailableError } from '#messaging';
import { ApiError, TooManyRequestsError } from './errors.js';
import { isRawBody } from './json-body.js';
import { allowedMethods, isEdgeAgentsPath } from './routes.js';

export interface ErrorBody {
  code: number;
  message: string;
  error_id?: string;
}

const UNAVAILABLE: ErrorBody = { code: 503, message: 'agent unavailable' };

/** How a history or router refusal reaches the client; messages stay generic. */
function remoteError(code: RpcErrorCode, url: string): ErrorBody | null {
  switch (code) {
    case 'connector_not_found':
      return { code: 404, message: 'connector not found' };
    case 'access_not_found':
      return { code: 404, message: 'access not found' };
    case 'not_found':
      return { code: 404, message: 'not found' };
    case 'invalid_request':
      return { code: 400, message: isEdgeAgentsPath(url) ? 'invalid agent request' : 'invalid request' };
    case 'conflict':
      return { code: 409, message: 'conflict' };
    case 'limit_reached':
      return { code: 409, message: 'limit reached' };
    case 'unavailable':
      return UNAVAILABLE;
    case 'internal':
      return null;
  }
}

/**
 * The one HTTP exception filter: typed errors keep their status with a generic message, an
 * unmatched route is 404 or (known path, wrong method) 405 with `Allow`, and anything else is a
 * 500 whose details are logged under an error id that is the only thing returned.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly log = new Logger(ApiExceptionFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const body = this.toBody(exception, request, reply);
    // A body cut short at the size limit leaves unread bytes on the socket; do not reuse it.
    if (isRawBody(request.body) && request.body.kind === 'too_large') reply.header('connection', 'close');
    reply.header('cache-control', 'no-store').status(body.code).send(body);
  }

  private toBody(exception: unknown, request: FastifyRequest, reply: FastifyReply): ErrorBody {
    if (exception instanceof ApiError) {
      if (exception instanceof TooManyRequestsError) {
        reply.header('retry-after', String(exception.retryAfterSeconds));
      }
      return { code: exception.status, message: exception.publicMessage };
    }
    if (exception instanceof RpcRemoteError) {
      const mapped = remoteError(exception.code, request.url);
      if (mapped) return mapped;
    }
    if (exception instanceof RpcUnavailableError) {
      this.log.warn(exception.message);
      return UNAVAILABLE;
    }
    if (exception instanceof NotFoundException) {
      // Only Nest's unmatched-route handler throws this: the api's own 404s are typed errors.
      const allow = allowedMethods(request.url);
      if (allow && !allow.includes(request.method)) {
        reply.header('allow', allow.join(', '));
        return { code: 405, message: 'method not allowed' };
      }
      return { code: 404, message: 'not found' };
    }
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      // Fastify refusing a request before any handler (e.g. a malformed Content-Type header).
      return {
        code: 400,
        message: isEdgeAgentsPath(request.url) ? 'invalid agent request' : 'invalid request',
      };
    }
    const errorId = randomUUID();
    const detail = exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
    this.log.error(`Request ${request.method} ${request.url} failed with error id ${errorId}: ${detail}`);
    return { code: 500, message: 'internal error', error_id: errorId };
  }
}
