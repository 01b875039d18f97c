// History's ops endpoints and the journal consumer's lag (messages the durable consumer has not
// yet been handed), read from JetStream only when /metrics is scraped.
import type { INestMicroservice } from '@nestjs/common';
import { ensureSessionsStream, NatsBus } from '#messaging';
import { PRISMA, type PrismaClient } from '#persistence';
import { METRIC, natsCheck, postgresCheck, registerGauge, startOpsServer, type OpsServer } from '#telemetry';
import type { HistoryConfig } from '../config.js';

export async function startHistoryTelemetry(
  app: INestMicroservice,
  config: HistoryConfig,
): Promise<OpsServer> {
  const { nc, subjects } = app.get(NatsBus);
  const prisma = app.get<PrismaClient>(PRISMA);
  const jsm = await ensureSessionsStream(nc, subjects, config.jetstream.sessions);
  const consumer = subjects.historyJournalConsumer;
  registerGauge(
    METRIC.consumerLag,
    'Journal messages not yet delivered to, or acked by, the history consumer.',
    async () => {
      const info = await jsm.consumers.info(subjects.sessionsStream, consumer);
      return info.num_pending + info.num_ack_pending;
    },
    { consumer },
  );
  return startOpsServer({
    service: 'history',
    port: config.metricsPort,
    checks: { nats: natsCheck(nc), postgres: postgresCheck(() => prisma.$queryRaw`SELECT 1`) },
  });
}
