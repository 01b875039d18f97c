// The one place that imports the generated client. It is TypeScript generated into
// prisma/generated (gitignored; `node scripts/prisma-generate.mjs`) with `.js` import
// extensions, so this import resolves to the .ts source under tsc and jest and to the emitted
// dist/prisma/generated/client.js at run time.
import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from '../../../prisma/generated/client.js';
import { createGuardedPool } from './pg-pool.js';

export { Prisma, PrismaClient };
export type {
  AgentAccess as AgentAccessRow,
  Connector as ConnectorRow,
  JournalRow,
  SessionHistory as SessionHistoryRow,
  SessionHistoryPage as SessionHistoryPageRow,
} from '../../../prisma/generated/client.js';

export interface PrismaOptions {
  /** postgresql:// URL of the database (TETHER_DATABASE_URL). */
  databaseUrl: string;
  /** Upper bound of pooled connections per process. */
  maxConnections?: number;
  /** A pooled connection failed while no query waited on it (Postgres restarted, say). */
  onConnectionError?: (error: Error) => void;
}

/** pg's own default; enough for one replica's handlers and its journal consumer. */
export const DEFAULT_MAX_CONNECTIONS = 10;

/**
 * A client over the pg driver adapter (Prisma 7 has no built-in driver), on a pool whose
 * connection errors are logged rather than thrown (pg-pool.ts). Connections open lazily on first
 * query; close it with `$disconnect()`, which ends the pool too.
 */
export function createPrismaClient(options: PrismaOptions): PrismaClient {
  const pool = createGuardedPool({
    connectionString: options.databaseUrl,
    max: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    onConnectionError: options.onConnectionError ?? (() => undefined),
  });
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  return new PrismaClient({ adapter });
}
