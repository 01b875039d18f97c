import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LogLevel } from '@nestjs/common';
import { Limits } from '#contracts';
import { ApiModule, type ApiDependencies } from './api.module.js';
import { AuthService } from './auth/auth.service.js';
import { configureFastify } from './common/http-setup.js';
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
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.register(deps), adapter, {
    // Bodies are buffered by our own parser and decoded per route (common/json-body.ts).
    bodyParser: false,
    logger: logLevels(deps.config.logLevel),
  });
  const fastify = app.getHttpAdapter().getInstance();
  configureFastify(fastify);
  refuseOverRateEarly(fastify, app.get(AuthService), app.get(UserLimits));
  return app;
}
