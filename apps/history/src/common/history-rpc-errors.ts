import { ServiceError, type OutageRule } from '#messaging';
import { isDatabaseUnavailable } from '#persistence';

export class DatabaseUnavailableError extends ServiceError {
  constructor() {
    super('unavailable', 'History is unavailable right now; retry shortly.');
  }
}

/**
 * While Postgres cannot answer (stopped, restarting, out of connections) a history request is
 * answered `unavailable` instead of `internal`.
 */
export const DATABASE_OUTAGE: OutageRule = {
  isOutage: isDatabaseUnavailable,
  // The code only: a Prisma message may quote the call's arguments.
  describe: (exception) => `Database unavailable (${String((exception as { code?: unknown }).code)})`,
  answer: () => new DatabaseUnavailableError(),
};
