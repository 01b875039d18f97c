import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { skipTracingWhen } from '#telemetry';
import type { AuthService } from '../auth/auth.service.js';
import { TOO_MANY_REQUESTS_MESSAGE } from '../common/errors.js';
import { isGuardedPath } from '../common/routes.js';
import type { UserLimits } from './user-limits.service.js';

/**
 * Refuses a caller that is already over its request rate in Fastify's `onRequest` hook, before
 * Nest routes the call, runs its guard and throws through the exception filter. A flood is mostly
 * such calls (docs/benchmarks.md B6: ~1,900 of 2,000 streams a round), and through Nest each cost
 * about half a millisecond of the api's CPU, time taken from every other user on that replica;
 * here a refusal is a map lookup and a short response.
 *
 * Only a token this replica has verified and still trusts is looked at (nothing is verified
 * here), and nothing is taken from the bucket: a call that passes goes on to the guard, which
 * authenticates, admits and counts it as before, so the answer a caller gets never depends on
 * which of the two refused it: 429, `Retry-After`, the same body.
 */
export function refuseOverRateEarly(fastify: FastifyInstance, auth: AuthService, limits: UserLimits): void {
  const retryAfterOf = (request: IncomingMessage | { url: string; headers: IncomingMessage['headers'] }) => {
    const principal = isGuardedPath(request.url ?? '')
      ? auth.cachedPrincipal(request.headers.authorization)
      : undefined;
    return principal ? limits.requestRetryAfter(principal.actorId) : 0;
  };
  // The HTTP instrumentation wraps a request before Fastify sees it, and was the largest share of
  // a refused call's CPU in a flood (docs/benchmarks.md B6): the calls refused here go untraced.
  // The same question is asked twice, a few microseconds apart; a caller whose rate refills in
  // between is traced and then refused by the guard, or untraced and admitted: either is harmless.
  skipTracingWhen((request) => retryAfterOf(request) > 0);
  fastify.addHook('onRequest', (request, reply, done) => {
    const retryAfter = retryAfterOf(request);
    if (retryAfter === 0) {
      done();
      return;
    }
    void reply
      .header('cache-control', 'no-store')
      .header('retry-after', String(retryAfter))
      .code(429)
      .send({ code: 429, message: TOO_MANY_REQUESTS_MESSAGE });
  });
}
