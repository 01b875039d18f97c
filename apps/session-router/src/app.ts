import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { INestMicroservice, LogLevel } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { QUEUE_GROUPS, inboxPrefix, Subjects } from '#contracts';
import { NatsTransport, RpcErrorFilter, connectNats } from '#messaging';
import { AppModule } from './app.module.js';
import { REDIS_OUTAGE } from './common/redis-errors.js';
import type { RouterConfig } from './config.js';
import { LeaseReaper } from './leases/lease-reaper.service.js';
import { WatchService } from './watch/watch.service.js';

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

export interface RunningRouter {
  app: INestMicroservice;
  nc: NatsConnection;
  /** Stops taking work, answers waiting watches, finishes in-flight handlers, closes clients. */
  close(): Promise<void>;
}

/** Builds and starts one router process (main.ts and the integration suites both use it). */
export async function startRouter(config: RouterConfig): Promise<RunningRouter> {
  const subjects = new Subjects(config.namespace);
  const nc = await connectNats({
    ...config.nats,
    name: 'session-router',
    inboxPrefix: inboxPrefix(subjects, 'session-router'),
  });
  const levels = LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(config.logLevel) + 1);
  let app: INestMicroservice;
  try {
    app = await NestFactory.createMicroservice(AppModule.register({ config, nc, subjects }), {
      strategy: new NatsTransport(nc, { queue: QUEUE_GROUPS.router, subjects }),
      logger: levels,
    });
    app.useGlobalFilters(new RpcErrorFilter(REDIS_OUTAGE));
    await app.listen();
  } catch (error) {
    await nc.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      app.get(WatchService).release();
      await app.get(LeaseReaper).stop();
      await app.close();
      await nc.drain();
    })());
  return { app, nc, close };
}
