import '#telemetry/register';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadEdgeConfig } from './config.js';
import { startEdge } from './edge.app.js';
import { startEdgeTelemetry } from './common/telemetry.js';

const config = loadEdgeConfig();
const edge = await startEdge(config);
await startEdgeTelemetry(edge, config);
const log = new Logger('EdgeConnector');
log.log(`Edge ${config.edgeId} serves ${config.agent} sessions in namespace ${config.namespace}.`);

let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  log.log(`Received ${signal}; stopping.`);
  edge.close().then(
    () => process.exit(0),
    (error: unknown) => {
      log.error(`Shutdown failed: ${(error as Error).message}`);
      process.exit(1);
    },
  );
};
// The client reconnects forever, except when the server refuses its credentials again after a
// drop: a rotated or deleted connector. Nothing can recover that but new credentials, so stop.
void edge.nc.closed().then((error) => {
  if (stopping) return;
  stopping = true;
  log.error(
    `NATS closed the connection for good (${error?.message ?? 'closed'}); stopping. A rotated or deleted ` +
      'connector needs new credentials from the api.',
  );
  edge.close().finally(() => process.exit(1));
});
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
