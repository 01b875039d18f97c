import { ServiceError } from '#messaging';

/** The connector does not exist or is not the actor's; the two are indistinguishable on purpose. */
export class ConnectorNotFoundError extends ServiceError {
  constructor() {
    super('connector_not_found', 'Connector not found.');
  }
}

/** The access does not exist, is not the actor's, or points at another connector. */
export class AccessNotFoundError extends ServiceError {
  constructor() {
    super('access_not_found', 'Agent access not found.');
  }
}

/** Input the contract schema accepted but a domain rule refuses. */
export class InvalidRequestError extends ServiceError {
  constructor(message: string) {
    super('invalid_request', message);
  }
}

/** The stored session is a tombstone (or its access is gone): nothing may be written to it. */
export class StoredSessionNotFoundError extends ServiceError {
  constructor() {
    super('not_found', 'Session not found.');
  }
}

/** The actor already has Limits.ACCESSES_PER_ACTOR_MAX saved accesses. */
export class AccessLimitError extends ServiceError {
  constructor() {
    super('limit_reached', 'Too many saved accesses for this user.');
  }
}

/** History has not applied the journal as far as the caller saw it; the caller retries. */
export class JournalNotAppliedError extends ServiceError {
  constructor() {
    super('unavailable', 'History has not applied the session journal that far yet; retry shortly.');
  }
}
