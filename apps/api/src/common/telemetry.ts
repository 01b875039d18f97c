// The api's ops routes on its own HTTP port (/metrics, /healthz, /readyz), the HTTP duration
// metric by action and status, and the SSE streams gauge (0 until the SSE stream exists).
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { NatsConnection } from '@nats-io/transport-node';
import { instrumentApiHttp, METRIC, natsCheck, registerGauge, type FastifyLike } from '#telemetry';

export function instrumentApi(app: NestFastifyApplication, nc: NatsConnection): void {
  registerGauge(METRIC.sseStreams, 'SSE subscribe streams open on this api process.', () => 0);
  instrumentApiHttp(app.getHttpAdapter().getInstance() as unknown as FastifyLike, { nats: natsCheck(nc) });
}
