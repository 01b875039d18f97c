import '#telemetry/register';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { stopOnSignals } from '#telemetry';
import { loadEdgeConfig } from './config.js';
import { startEdge } from './edge.app.js';
import { startEdgeTelemetry } from './common/telemetry.js';

const config = loadEdgeConfig();
const edge = await startEdge(config);
const ops = await startEdgeTelemetry(edge, config);
const log = new Logger('EdgeConnector');
log.log(`Edge ${config.edgeId} serves ${config.agent} sessions in namespace ${config.namespace}.`);

// Stops the heartbeat and the RPC subscription, shuts the agent sessions down, flushes their last
// updates and drains NATS (edge.app.ts).
stopOnSignals({ service: 'edge-connector', ops, graceMs: config.shutdownGraceMs, stop: () => edge.close() });
