import '#telemetry/register';
import 'reflect-metadata';
import { startHistory } from './bootstrap.js';
import { loadHistoryConfig } from './config.js';
import { startHistoryTelemetry } from './common/telemetry.js';

const config = loadHistoryConfig();
const app = await startHistory(config);
await startHistoryTelemetry(app, config);
// Nest closes the app on these signals (stop taking work, finish in-flight, stop the journal
// consumer, close Postgres, drain NATS) and then exits with the signal.
app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
