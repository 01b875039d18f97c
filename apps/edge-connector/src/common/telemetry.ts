// The edge's ops endpoints, off unless TETHER_METRICS_PORT is set (it runs on an owner's
// machine), and its live-sessions gauge. Turn spans and histograms come from LiveSession.
import type { NatsConnection } from '@nats-io/transport-node';
import { METRIC, natsCheck, registerGauge, startOpsServer, type OpsServer } from '#telemetry';
import type { EdgeConfig } from '../config.js';
import type { SessionsService } from '../sessions/sessions.service.js';

export function startEdgeTelemetry(
  edge: { sessions: SessionsService; nc: NatsConnection },
  config: EdgeConfig,
): Promise<OpsServer> {
  registerGauge(METRIC.liveSessions, 'Sessions open on this edge.', () => edge.sessions.liveSessions, {
    edge_id: config.edgeId,
  });
  return startOpsServer({
    service: 'edge-connector',
    port: config.metricsPort,
    host: config.metricsHost,
    checks: { nats: natsCheck(edge.nc) },
  });
}
