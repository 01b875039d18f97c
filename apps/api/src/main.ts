import '#telemetry/register';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadConfig } from '#config';
import { inboxPrefix, Subjects } from '#contracts';
import { connectNats } from '#messaging';
import { createApiApp } from './app.js';
import { apiConfigSchema } from './config.js';
import { instrumentApi } from './common/telemetry.js';

async function bootstrap(): Promise<void> {
  const logger = new Logger('Api');
  const config = loadConfig(apiConfigSchema);
  const subjects = new Subjects(config.namespace);
  const nc = await connectNats({
    ...config.nats,
    name: 'api',
    inboxPrefix: inboxPrefix(subjects, 'api'),
  });
  const app = await createApiApp({ config, nc, subjects });
  instrumentApi(app, nc);
  await app.listen(config.http.port, config.http.host);
  logger.log(`Api ready at ${await app.getUrl()} (namespace ${config.namespace}).`);

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.log(`Received ${signal}, shutting down.`);
    try {
      // Stop accepting HTTP and let in-flight requests (they still need NATS) finish first.
      await app.close();
      await nc.drain();
      logger.log('Api stopped.');
      process.exit(0);
    } catch (error) {
      logger.error(`Shutdown failed: ${(error as Error).message}`);
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

bootstrap().catch((error: unknown) => {
  new Logger('Api').fatal(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
