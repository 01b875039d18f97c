import '#telemetry/register';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadConfig } from '#config';
import { SHUTDOWN_GRACE_DEFAULT_MS, stopOnSignals } from '#telemetry';
import { startApi } from './app.js';
import { apiConfigSchema } from './config.js';

const config = loadConfig(apiConfigSchema);
const api = await startApi(config);
new Logger('Api').log(`Api ready at ${await api.app.getUrl()} (namespace ${config.namespace}).`);
// Stops listening, ends the SSE streams and finishes in-flight requests, then drains NATS (app.ts).
stopOnSignals({
  service: 'api',
  ops: api.ops,
  graceMs: config.shutdown?.graceMs ?? SHUTDOWN_GRACE_DEFAULT_MS,
  delayMs: config.shutdown?.delayMs,
  stop: () => api.close(),
});
