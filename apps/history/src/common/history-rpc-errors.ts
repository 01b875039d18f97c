import { Catch, Logger, type ArgumentsHost } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { RpcError } from '#contracts';
import { RpcErrorFilter, ServiceError } from '#messaging';
import { isDatabaseUnavailable } from '#persistence';

export class DatabaseUnavailableError extends ServiceError {
  constructor() {
    super('unavailable', 'History is unavailable right now; retry shortly.');
  }
}

const log = new Logger('HistoryRpcErrorFilter');

/**
 * History's NATS error filter: while Postgres cannot answer (stopped, restarting, out of
 * connections) a request is answered `unavailable` — retryable, the api answers 503 — instead of
 * `internal` (500), which a client must not retry. Everything else as usual.
 */
@Catch()
export class HistoryRpcErrorFilter extends RpcErrorFilter {
  override catch(exception: unknown, host: ArgumentsHost): Observable<RpcError> {
    if (!isDatabaseUnavailable(exception)) return super.catch(exception, host);
    // The code only: a Prisma message may quote the call's arguments.
    const code = (exception as { code?: unknown }).code;
    log.warn(`Database unavailable (${String(code)}), request answered "unavailable".`);
    return super.catch(new DatabaseUnavailableError(), host);
  }
}
