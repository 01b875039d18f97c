// The first import of every app's main.ts: the SDK must patch http, ioredis, pg and Prisma
// before the app loads them, and Nest's logger must be the JSON one before the first line.
import { startTelemetry, shutdownTelemetry } from './sdk.js';
import { installLogger } from './logger.js';

startTelemetry();
installLogger();

export { shutdownTelemetry };
