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

export class UnauthorizedError extends ApiError {
  readonly status = 401;
  readonly publicMessage = 'unauthorized';
}

export class ForbiddenError extends ApiError {
  readonly status = 403;
  readonly publicMessage = 'forbidden';
}

/** A body of POST /api/v1/edge-agents that is not one valid agent request. */
export class InvalidAgentRequestError extends ApiError {
  readonly status = 400;
  readonly publicMessage = 'invalid agent request';
}

/** Any other malformed body. */
export class InvalidRequestError extends ApiError {
  readonly status = 400;
  readonly publicMessage = 'invalid request';
}

export class InvalidPageError extends ApiError {
  readonly status = 400;
  readonly publicMessage = 'invalid page';
}

export class ConnectorNotFoundError extends ApiError {
  readonly status = 404;
  readonly publicMessage = 'connector not found';
}

export class AccessNotFoundError extends ApiError {
  readonly status = 404;
  readonly publicMessage = 'access not found';
}

/** The identity provider's key set cannot be fetched: no token can be checked right now. */
export class AuthUnavailableError extends ApiError {
  readonly status = 503;
  readonly publicMessage = 'agent unavailable';
}

/** A per-user or per-edge limit refused the call; `Retry-After` says when to try again. */
/** What a caller over one of its limits reads (the error filter and the early refusal both send it). */
export const TOO_MANY_REQUESTS_MESSAGE = 'too many requests';

export class TooManyRequestsError extends ApiError {
  readonly status = 429;
  readonly publicMessage = TOO_MANY_REQUESTS_MESSAGE;
  constructor(
    detail: string,
    /** Whole seconds, at least 1 (RFC 9110 `Retry-After` delay-seconds). */
    readonly retryAfterSeconds: number,
  ) {
    super(detail);
  }
}

/** A console route with nothing behind it (console not built, development sign-in off). */
export class NotFoundError extends ApiError {
  readonly status = 404;
  readonly publicMessage = 'not found';
}
