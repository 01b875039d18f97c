import '#telemetry/register';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { stopOnSignals } from '#telemetry';
import { loadRouterConfig } from './config.js';
import { startRouter } from './app.js';
import { startRouterTelemetry } from './common/telemetry.js';

const log = new Logger('SessionRouter');
const config = loadRouterConfig();
const router = await startRouter(config);
const ops = await startRouterTelemetry(router, config);
log.log(`Session router ready on namespace ${config.namespace}.`);

// Queue subscriptions drain (NATS hands new requests to the other replicas), waiting watches are
// answered, in-flight handlers finish, then the connection drains (app.ts).
stopOnSignals({ service: 'session-router', ops, ...config.shutdown, stop: () => router.close() });
