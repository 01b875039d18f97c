// The api's ops routes on its own HTTP port (/metrics, /healthz, /readyz), the HTTP duration
// metric by action and status, and the SSE streams gauge.
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { NatsConnection } from '@nats-io/transport-node';
import { instrumentApiHttp, METRIC, natsCheck, registerGauge, type FastifyLike } from '#telemetry';

/** SSE journal streams open on this process (sessions/journal-events.stream.ts counts them). */
let openSseStreams = 0;
export function noteSseStream(delta: 1 | -1): void {
  openSseStreams += delta;
}

export function instrumentApi(app: NestFastifyApplication, nc: NatsConnection): void {
  registerGauge(METRIC.sseStreams, 'SSE subscribe streams open on this api process.', () => openSseStreams);
  instrumentApiHttp(app.getHttpAdapter().getInstance() as unknown as FastifyLike, { nats: natsCheck(nc) });
}
