import { ServiceError } from '#messaging';

/** An edge's token did not match its id. The reply never says more than that. */
export class EdgeCredentialsRefusedError extends ServiceError {
  constructor() {
    super('invalid_request', 'Edge credentials were refused.');
  }
}

/** A session update for a session that belongs to another edge or owner. */
export class SessionScopeError extends ServiceError {
  constructor(sessionId: string) {
    super('invalid_request', `Session ${sessionId} belongs to another edge or owner.`);
  }
}

export class InvalidSessionIdError extends ServiceError {
  constructor() {
    super('invalid_request', 'session_id is not a valid session id.');
  }
}

/** History cannot say which credentials an edge holds now; the edge retries its update. */
export class EdgeCredentialsUnknownError extends ServiceError {
  constructor() {
    super('unavailable', 'Edge credentials cannot be checked right now.');
  }
}
