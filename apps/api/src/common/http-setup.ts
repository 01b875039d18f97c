import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerRawBodyParser } from './json-body.js';

const RECEIVED_AT = Symbol('RECEIVED_AT');
interface TimedRequest {
  [RECEIVED_AT]?: number;
}

/**
 * Fastify-level setup shared by main.ts and the tests: every response (errors and 404s included)
 * is `Cache-Control: no-store` (reference §2.1), each request notes when it arrived, and bodies
 * are buffered, not parsed, until the route's pipe decodes them.
 */
export function configureFastify(fastify: FastifyInstance): void {
  registerRawBodyParser(fastify);
  fastify.addHook('onRequest', (request, reply, done) => {
    (request as FastifyRequest & TimedRequest)[RECEIVED_AT] = performance.now();
    reply.header('cache-control', 'no-store');
    done();
  });
}

/** `@ReceivedAt() startedAt: number`: performance.now() when the request arrived. */
export const ReceivedAt = createParamDecorator((_data: unknown, context: ExecutionContext): number => {
  const request = context.switchToHttp().getRequest<FastifyRequest & TimedRequest>();
  return request[RECEIVED_AT] ?? performance.now();
});
