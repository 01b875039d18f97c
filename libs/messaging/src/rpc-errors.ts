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
 * The one filter for NATS handlers: a ServiceError becomes its RpcError reply; anything else is
 * logged with an error id, and only that id goes back to the caller.
 */
@Catch()
export class RpcErrorFilter implements RpcExceptionFilter<unknown> {
  private readonly log = new Logger('RpcErrorFilter');

  catch(exception: unknown, _host: ArgumentsHost): Observable<RpcError> {
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
