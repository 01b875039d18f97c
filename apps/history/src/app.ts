import { Logger, type INestMicroservice, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QUEUE_GROUPS, inboxPrefix, Subjects } from '#contracts';
import { connectNats, NatsTransport, RpcErrorFilter } from '#messaging';
import { AppModule } from './app.module.js';
import { DATABASE_OUTAGE } from './common/history-rpc-errors.js';
import type { HistoryConfig } from './config.js';

const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'log', 'debug', 'verbose'];

/**
 * Connects, builds and starts the history service. main.ts calls it; integration tests call it
 * in-process with their own namespace and database. `app.close()` stops taking requests,
 * finishes in-flight handlers, stops the journal consumer, closes the database pool and
 * drains the NATS connection, in that order.
 */
export async function startHistory(config: HistoryConfig): Promise<INestMicroservice> {
  const subjects = new Subjects(config.namespace);
  const nc = await connectNats({
    ...config.nats,
    name: 'history',
    inboxPrefix: inboxPrefix(subjects, 'history'),
  });
  try {
    const app = await NestFactory.createMicroservice(AppModule.register({ config, nc, subjects }), {
      strategy: new NatsTransport(nc, { queue: QUEUE_GROUPS.history, subjects }),
      logger: LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(config.logLevel) + 1),
    });
    app.useGlobalFilters(new RpcErrorFilter(DATABASE_OUTAGE));
    await app.listen();
    new Logger('History').log(`History service ready in namespace ${config.namespace}.`);
    return app;
  } catch (error) {
    await nc.close();
    throw error;
  }
}
