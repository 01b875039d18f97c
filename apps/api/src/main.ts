import '#telemetry/register';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadConfig } from '#config';
import { inboxPrefix, Subjects } from '#contracts';
import { connectNats } from '#messaging';
import { SHUTDOWN_GRACE_DEFAULT_MS, stopOnSignals } from '#telemetry';
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
  const ops = await instrumentApi(app, nc, config);
  await app.listen(config.http.port, config.http.host);
  logger.log(`Api ready at ${await app.getUrl()} (namespace ${config.namespace}).`);

  stopOnSignals({
    service: 'api',
    ops,
    graceMs: config.shutdown?.graceMs ?? SHUTDOWN_GRACE_DEFAULT_MS,
    delayMs: config.shutdown?.delayMs,
    // Stop listening, end the SSE streams (clients resume elsewhere from their last event id)
    // and let in-flight requests finish: they still need NATS, which is drained after them.
    stop: async () => {
      await app.close();
      await nc.drain();
    },
  });
}

bootstrap().catch((error: unknown) => {
  new Logger('Api').fatal(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
