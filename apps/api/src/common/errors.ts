// Typed errors of the HTTP layer. Each carries its status and the generic message a client sees;
// the one exception filter (api-exception.filter.ts) turns them into the error envelope.

export abstract class ApiError extends Error {
  abstract readonly status: number;
  abstract readonly publicMessage: string;
  constructor(detail?: string) {
    super(detail);
    this.name = new.target.name;
  }
}

/** The base of an error with a fixed status and public message; `detail` stays in the logs. */
function fixed(status: number, publicMessage: string) {
  return class extends ApiError {
    readonly status = status;
    readonly publicMessage = publicMessage;
  };
}

export class UnauthorizedError extends fixed(401, 'unauthorized') {}
export class ForbiddenError extends fixed(403, 'forbidden') {}
/** A body of POST /api/v1/edge-agents that is not one valid agent request. */
export class InvalidAgentRequestError extends fixed(400, 'invalid agent request') {}
/** Any other malformed body. */
export class InvalidRequestError extends fixed(400, 'invalid request') {}
export class InvalidPageError extends fixed(400, 'invalid page') {}
export class ConnectorNotFoundError extends fixed(404, 'connector not found') {}
export class AccessNotFoundError extends fixed(404, 'access not found') {}
/** The identity provider's key set cannot be fetched: no token can be checked right now. */
export class AuthUnavailableError extends fixed(503, 'agent unavailable') {}
/** A console route with nothing behind it (console not built, development sign-in off). */
export class NotFoundError extends fixed(404, 'not found') {}

/** What a caller over one of its limits reads (the error filter and the early refusal both send it). */
export const TOO_MANY_REQUESTS_MESSAGE = 'too many requests';

/** A per-user or per-edge limit refused the call; `Retry-After` says when to try again. */
export class TooManyRequestsError extends fixed(429, TOO_MANY_REQUESTS_MESSAGE) {
  constructor(
    detail: string,
    /** Whole seconds, at least 1 (RFC 9110 `Retry-After` delay-seconds). */
    readonly retryAfterSeconds: number,
  ) {
    super(detail);
  }
}
