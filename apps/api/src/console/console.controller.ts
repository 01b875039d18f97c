import { Body, Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { InvalidRequestError, NotFoundError } from '../common/errors.js';
import { JsonBodyPipe } from '../common/json-body.js';
import {
  API_PREFIX,
  CONSOLE_ASSETS_PATH,
  CONSOLE_CONFIG_PATH,
  CONSOLE_DEV_TOKEN_PATH,
} from '../common/routes.js';
import { ASSET_NAME } from './console.assets.js';
import { devTokenSchema, type DevTokenInput } from './console.schemas.js';
import { ConsoleService, type ConsolePublicConfig } from './console.service.js';

/** Hashed names never change content: a year, and no revalidation. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The web console: its page at `/`, its hashed assets, its public settings and (development api
 * only) its development sign-in. Everything here is public: the page signs in by itself.
 */
@Controller()
export class ConsoleController {
  constructor(private readonly console: ConsoleService) {}

  @Get()
  page(@Res() reply: FastifyReply): void {
    const index = this.console.index;
    if (index === undefined) throw new NotFoundError('The console is not built.');
    void reply
      .type('text/html; charset=utf-8')
      // Always revalidated, so a new release's asset names are picked up at the next load.
      .header('cache-control', 'no-cache')
      .header('content-security-policy', this.console.contentSecurityPolicy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(index);
  }

  @Get(CONSOLE_ASSETS_PATH)
  asset(@Param('name') name: string, @Res() reply: FastifyReply): void {
    const asset = ASSET_NAME.test(name) ? this.console.asset(name) : undefined;
    if (!asset) throw new NotFoundError(`No console asset ${name}.`);
    void reply
      .type(asset.contentType)
      .header('cache-control', IMMUTABLE)
      .header('x-content-type-options', 'nosniff')
      .send(asset.body);
  }

  @Get(`${API_PREFIX}/${CONSOLE_CONFIG_PATH}`)
  config(): ConsolePublicConfig {
    return this.console.publicConfig;
  }

  @Post(`${API_PREFIX}/${CONSOLE_DEV_TOKEN_PATH}`)
  @HttpCode(200)
  async devToken(
    @Body(new JsonBodyPipe<DevTokenInput>(devTokenSchema, () => new InvalidRequestError()))
    input: DevTokenInput,
  ): Promise<{ token: string; expires_in: number }> {
    // Outside development the route does not exist as far as a caller can tell.
    if (!this.console.devSignIn) throw new NotFoundError('Development sign-in is off.');
    return this.console.devToken(input.sub);
  }
}
