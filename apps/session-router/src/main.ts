import '#telemetry/register';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadRouterConfig } from './config.js';
import { startRouter } from './router.js';
import { startRouterTelemetry } from './common/telemetry.js';

const log = new Logger('SessionRouter');
const config = loadRouterConfig();
const router = await startRouter(config);
await startRouterTelemetry(router, config);
log.log(`Session router ready on namespace ${config.namespace}.`);

const shutdown = (signal: string) => {
  log.log(`Received ${signal}; shutting down.`);
  router.close().then(
    () => process.exit(0),
    (error: unknown) => {
      log.error(`Shutdown failed: ${(error as Error).message}`);
      process.exit(1);
    },
  );
};
process.once('SIGTERM', () => shutdown('SIGTERM'));
process.once('SIGINT', () => shutdown('SIGINT'));
