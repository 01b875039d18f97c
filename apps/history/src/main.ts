import '#telemetry/register';
import 'reflect-metadata';
import { stopOnSignals } from '#telemetry';
import { startHistory } from './app.js';
import { loadHistoryConfig } from './config.js';
import { startHistoryTelemetry } from './common/telemetry.js';

const config = loadHistoryConfig();
const app = await startHistory(config);
const ops = await startHistoryTelemetry(app, config);
// Closing the app stops taking requests, finishes in-flight handlers, stops the journal pull
// (pulled but unstarted messages are nak'ed back to the other replicas), closes Postgres and
// drains NATS (app.ts).
stopOnSignals({ service: 'history', ops, ...config.shutdown, stop: () => app.close() });
