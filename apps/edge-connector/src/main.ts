import '#telemetry/register';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { stopOnSignals } from '#telemetry';
import { loadEdgeConfig } from './config.js';
import { startEdge } from './app.js';
import { startEdgeTelemetry } from './common/telemetry.js';

const config = loadEdgeConfig();
const edge = await startEdge(config);
const ops = await startEdgeTelemetry(edge, config);
const log = new Logger('EdgeConnector');
log.log(
  `Edge ${config.edgeId} serves ${config.agents.join(', ')} sessions in namespace ${config.namespace}.`,
);

// Stops the heartbeat and the RPC subscription, shuts the agent sessions down, flushes their last
// updates and drains NATS (app.ts).
let stopping = false;
stopOnSignals({
  service: 'edge-connector',
  ops,
  graceMs: config.shutdownGraceMs,
  stop: () => {
    stopping = true;
    return edge.close();
  },
});
// The client reconnects forever, except when the server refuses its credentials again after a
// drop: a rotated or deleted connector. Nothing can recover that but new credentials, so stop.
void edge.nc.closed().then((error) => {
  if (stopping) return; // the shutdown above drained the connection
  stopping = true;
  log.error(
    `NATS closed the connection for good (${error?.message ?? 'closed'}); stopping. A rotated or deleted ` +
      'connector needs new credentials from the api.',
  );
  edge
    .close()
    .catch((closeError: unknown) =>
      log.error(
        `Shutdown after the NATS close failed: ${closeError instanceof Error ? closeError.message : String(closeError)}`,
      ),
    )
    .finally(() => process.exit(1));
});
