// The api's ops endpoints on their own port (/metrics, /healthz, /readyz), the HTTP duration
// metric by action and status, and the SSE streams gauge.
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  instrumentApiHttp,
  listeningCheck,
  METRIC,
  natsCheck,
  registerGauge,
  startOpsServer,
  type FastifyLike,
  type OpsServer,
} from '#telemetry';
import type { ApiConfig } from '../config.js';

/** SSE journal streams open on this process (sessions/journal-events.stream.ts counts them). */
let openSseStreams = 0;
export function noteSseStream(delta: 1 | -1): void {
  openSseStreams += delta;
}

export function instrumentApi(
  app: NestFastifyApplication,
  nc: NatsConnection,
  config: ApiConfig,
): Promise<OpsServer> {
  registerGauge(METRIC.sseStreams, 'SSE subscribe streams open on this api process.', () => openSseStreams);
  instrumentApiHttp(app.getHttpAdapter().getInstance() as unknown as FastifyLike);
  return startOpsServer({
    service: 'api',
    port: config.metricsPort ?? 'off',
    // Ready once the public port listens (the ops port opens first) and until it closes.
    checks: { nats: natsCheck(nc), http: listeningCheck(app.getHttpServer()) },
  });
}
