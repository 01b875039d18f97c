export { PersistenceModule, PrismaLifecycle, PRISMA } from './persistence.module.js';
export { createPrismaClient, DEFAULT_MAX_CONNECTIONS, Prisma, PrismaClient } from './prisma-client.js';
export type {
  PrismaOptions,
  AgentAccessRow,
  ConnectorRow,
  JournalRow,
  SessionHistoryRow,
  SessionHistoryPageRow,
} from './prisma-client.js';
export { isDatabaseUnavailable } from './database-errors.js';
export { createGuardedPool } from './pg-pool.js';
export type { GuardedPoolOptions } from './pg-pool.js';
