// The web console's routes in the OpenAPI document (docs/console.md).
import { CONSOLE_CONFIG_PATH, CONSOLE_DEV_TOKEN_PATH } from '../../common/routes.js';
import { devTokenSchema } from '../../console/console.schemas.js';
import { ref } from '../edge-agent.schemas.js';
import type { OpenApiDocument } from '../openapi.document.js';
import {
  CONSOLE_ASSET_CACHE,
  CONSOLE_PAGE_CACHE,
  errorResponse,
  fromDecoder,
  jsonBody,
  NOT_FOUND,
  ok,
  path,
  PUBLIC_ERRORS,
  responseRef,
} from './shared.js';

/** The console's page and its content-hashed assets. */
export function consolePagePaths(): OpenApiDocument['paths'] {
  return {
    '/': {
      get: {
        operationId: 'consolePage',
        tags: ['console'],
        summary: 'The web console',
        description:
          'HTML with `Cache-Control: no-cache` and a strict Content-Security-Policy (same-origin scripts and styles only; connections to the api and the OpenID provider). No authentication: the page signs in by itself.',
        security: [],
        responses: {
          '200': {
            description: 'The page.',
            headers: CONSOLE_PAGE_CACHE,
            content: { 'text/html': { schema: { type: 'string' } } },
          },
          '404': NOT_FOUND,
          ...PUBLIC_ERRORS,
        },
      },
    },
    '/assets/{name}': {
      parameters: [
        {
          name: 'name',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,200}$' },
        },
      ],
      get: {
        operationId: 'consoleAsset',
        tags: ['console'],
        summary: 'A console asset (script, style) by its content-hashed name',
        description: 'Sent with `Cache-Control: public, max-age=31536000, immutable`.',
        security: [],

        responses: {
          '200': {
            description: 'The asset.',
            headers: CONSOLE_ASSET_CACHE,
            content: { '*/*': { schema: { type: 'string' } } },
          },
          '404': NOT_FOUND,
          ...PUBLIC_ERRORS,
        },
      },
    },
  };
}

/** The console's settings and its development sign-in. */
export function consoleApiPaths(): OpenApiDocument['paths'] {
  return {
    [path(CONSOLE_CONFIG_PATH)]: {
      get: {
        operationId: 'consoleConfig',
        tags: ['console'],
        summary: "The console's public settings: OpenID provider, development sign-in, trace links",
        security: [],
        responses: {
          '200': ok('The settings.', ref('ConsoleConfig'), {
            oidc: null,
            dev_sign_in: true,
            trace_url_template: null,
          }),
          ...PUBLIC_ERRORS,
        },
      },
    },
    [path(CONSOLE_DEV_TOKEN_PATH)]: {
      post: {
        operationId: 'consoleDevToken',
        tags: ['console'],
        summary: 'A development token (only when the api runs with the development secret)',
        description:
          'Signs a token with every permission for `sub`. Exists only while the api verifies tokens with the public development secret (`dev_sign_in: true`); otherwise 404.',
        security: [],
        requestBody: jsonBody(fromDecoder(devTokenSchema, 'The user to sign in as.')),
        responses: {
          '200': ok('The token.', {
            type: 'object',
            required: ['token', 'expires_in'],
            properties: { token: { type: 'string' }, expires_in: { type: 'integer' } },
          }),
          '400': responseRef('BadRequest'),
          '404': errorResponse(404, 'Not a development api.', ['not found']),
          ...PUBLIC_ERRORS,
        },
      },
    },
  };
}
