import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LogLevel } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { inboxPrefix, Limits, Subjects } from '#contracts';
import { connectNats } from '#messaging';
import type { OpsServer } from '#telemetry';
import { AppModule, type ApiDependencies } from './app.module.js';
import { AuthService } from './auth/auth.service.js';
import { configureFastify } from './common/http-setup.js';
import { instrumentApi } from './common/telemetry.js';
import type { ApiConfig } from './config.js';
import { refuseOverRateEarly } from './limits/early-refusal.js';
import { UserLimits } from './limits/user-limits.service.js';

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** The levels at or above the configured one. */
function logLevels(level: ApiConfig['logLevel']): LogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(level) + 1);
}

/** The api application, configured but not listening: main.ts and the tests both start it. */
export async function createApiApp(deps: ApiDependencies): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: Limits.HTTP_BODY_LIMIT_BYTES,
    // Paths are matched exactly; `/api/v1/edge-agents/` is not a route.
    routerOptions: { ignoreTrailingSlash: false },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.register(deps), adapter, {
    // Bodies are buffered by our own parser and decoded per route (common/json-body.ts).
    bodyParser: false,
    logger: logLevels(deps.config.logLevel),
  });
  const fastify = app.getHttpAdapter().getInstance();
  configureFastify(fastify);
  refuseOverRateEarly(fastify, app.get(AuthService), app.get(UserLimits));
  return app;
}

export interface RunningApi {
  app: NestFastifyApplication;
  nc: NatsConnection;
  /** The ops server (/metrics, /healthz, /readyz), started before the public port listens. */
  ops: OpsServer;
  /**
   * Stops listening, ends the SSE streams (clients resume elsewhere from their last event id) and
   * lets in-flight requests finish; they still need NATS, which is drained after them.
   */
  close(): Promise<void>;
}

/**
 * Builds and starts one api process (main.ts). Unlike the other services its telemetry is part of
 * the start: the HTTP instrumentation hooks into Fastify, which takes no hooks once it listens.
 */
export async function startApi(config: ApiConfig): Promise<RunningApi> {
  const subjects = new Subjects(config.namespace);
  const nc = await connectNats({ ...config.nats, name: 'api', inboxPrefix: inboxPrefix(subjects, 'api') });
  const app = await createApiApp({ config, nc, subjects });
  const ops = await instrumentApi(app, nc, config);
  await app.listen(config.http.port, config.http.host);
  return {
    app,
    nc,
    ops,
    close: async () => {
      await app.close();
      await nc.drain();
    },
  };
}
