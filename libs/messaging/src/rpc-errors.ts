import { randomUUID } from 'node:crypto';
import { Catch, Logger, type ArgumentsHost, type RpcExceptionFilter } from '@nestjs/common';
import { of, type Observable } from 'rxjs';
import type { RpcError, RpcErrorCode } from '#contracts';

/**
 * A domain error that crosses a service boundary: its code reaches the caller as an RpcError,
 * its message only when `expose` is set (messages may name internals otherwise).
 */
export class ServiceError extends Error {
  constructor(
    readonly rpcCode: RpcErrorCode,
    message: string,
    readonly expose = true,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidPayloadError extends ServiceError {
  constructor(subject: string, detail: string) {
    super('invalid_request', `Invalid payload on ${subject}: ${detail}`);
  }
}

/**
 * A service's backing store being down (Postgres for history, Redis for the router): such a
 * failure is answered `unavailable` (retryable; the api answers 503), never `internal` (500,
 * which a client must not retry).
 */
export interface OutageRule {
  isOutage(exception: unknown): boolean;
  /** What the log says of the failure; never the raw message where it may quote arguments. */
  describe(exception: unknown): string;
  /** The error the caller receives instead. */
  answer(): ServiceError;
}

/**
 * The one filter for NATS handlers: a ServiceError becomes its RpcError reply; an outage of the
 * service's store, when it names one, becomes its `unavailable` answer; anything else is logged
 * with an error id, and only that id goes back to the caller.
 */
@Catch()
export class RpcErrorFilter implements RpcExceptionFilter<unknown> {
  private readonly log = new Logger('RpcErrorFilter');

  constructor(private readonly outage?: OutageRule) {}

  catch(exception: unknown, _host: ArgumentsHost): Observable<RpcError> {
    if (this.outage?.isOutage(exception)) {
      this.log.warn(`${this.outage.describe(exception)}, request answered "unavailable".`);
      exception = this.outage.answer();
    }
    if (exception instanceof ServiceError) {
      return of({
        error: {
          code: exception.rpcCode,
          message: exception.expose ? exception.message : exception.rpcCode,
        },
      });
    }
    const errorId = randomUUID();
    this.log.error(
      `Handler failed with error id ${errorId}: ${exception instanceof Error ? (exception.stack ?? exception.message) : String(exception)}`,
    );
    return of({ error: { code: 'internal', message: `internal error ${errorId}` } });
  }
}
