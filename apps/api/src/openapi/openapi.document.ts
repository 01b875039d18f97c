// The api's OpenAPI 3.1 document, built once from the route table, the api's own body decoders
// and the contract constants. The openapi integration test compares its paths with the routes
// Fastify actually serves, so a route added without documentation fails the build.
import { z } from 'zod';
import { EDGE_AGENT_ACTIONS, Limits } from '#contracts';
import { accessInputSchema } from '../accesses/accesses.schemas.js';
import {
  ACCESSES_PATH,
  API_PREFIX,
  CONNECTORS_PATH,
  EDGE_AGENTS_PATH,
  OPENAPI_DOCUMENT_PATH,
  OPENAPI_PAGE_PATH,
  CONSOLE_CONFIG_PATH,
  CONSOLE_DEV_TOKEN_PATH,
  SESSIONS_PATH,
} from '../common/routes.js';
import { enrollSchema } from '../connectors/connectors.schemas.js';
import { devTokenSchema } from '../console/console.schemas.js';
import { actionExample, ref, requestSchemas, resultSchemas, type Schema } from './edge-agent.schemas.js';

export const OPENAPI_VERSION = '3.1.1';
export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: { url: string; description?: string }[];
  security?: Record<string, string[]>[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, Partial<Record<HttpMethod, Operation>> & { parameters?: Schema[] }>;
  components: {
    schemas: Record<string, Schema>;
    responses: Record<string, Schema>;
    headers: Record<string, Schema>;
    parameters: Record<string, Schema>;
    securitySchemes: Record<string, Schema>;
  };
}

export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Schema[];
  requestBody?: Schema;
  responses: Record<string, Schema>;
  'x-permissions'?: string[];
}

const path = (relative: string): string => `/${API_PREFIX}/${relative}`;
const responseRef = (name: string): Schema => ({ $ref: `#/components/responses/${name}` });
const NO_STORE = { 'Cache-Control': { $ref: '#/components/headers/CacheControl' } };

/** A schema from one of the api's zod body decoders: the documented body is the decoded one. */
function fromDecoder(schema: z.ZodType, description: string): Schema {
  const generated = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' }) as Schema;
  delete generated['$schema'];
  return { ...generated, description };
}

function envelope(data: Schema): Schema {
  return {
    type: 'object',
    required: ['code', 'message', 'data'],
    properties: {
      code: { type: 'integer', const: 200 },
      message: { type: 'string', const: 'success' },
      data,
    },
  };
}

function ok(description: string, data: Schema, example?: unknown): Schema {
  return {
    description,
    headers: NO_STORE,
    content: {
      'application/json': {
        schema: envelope(data),
        ...(example === undefined ? {} : { example: { code: 200, message: 'success', data: example } }),
      },
    },
  };
}

function jsonBody(schema: Schema, extra: Schema = {}): Schema {
  return {
    required: true,
    description: `A single JSON value with Content-Type application/json, at most ${Limits.HTTP_BODY_LIMIT_BYTES} bytes; anything else is 400.`,
    content: { 'application/json': { schema, ...extra } },
  };
}

/** The error responses an authenticated route may give, in the order they are checked. */
function authErrors(...more: string[]): Record<string, Schema> {
  const all: Record<string, Schema> = {
    '400': responseRef('BadRequest'),
    '401': responseRef('Unauthorized'),
    '403': responseRef('Forbidden'),
    '404': responseRef('NotFound'),
    '405': responseRef('MethodNotAllowed'),
    '500': responseRef('InternalError'),
    '503': responseRef('Unavailable'),
  };
  const always = ['401', '403', '405', '500', '503'];
  return Object.fromEntries(
    Object.entries(all).filter(([code]) => always.includes(code) || more.includes(code)),
  );
}

function errorResponse(
  status: number,
  description: string,
  messages: string[],
  extraHeaders: Schema = {},
): Schema {
  return {
    description,
    headers: { ...NO_STORE, ...extraHeaders },
    content: {
      'application/json': {
        schema: ref('ErrorBody'),
        examples: Object.fromEntries(
          messages.map((message) => [message.replaceAll(' ', '_'), { value: { code: status, message } }]),
        ),
      },
    },
  };
}

const SAMPLE_ACCESS = {
  id: '3f2a9c6b8d1e4f7a0b5c2d9e8f1a6b3c',
  name: 'Main project',
  kind: 'codex',
  edge_id: '1001',
  installation_id: '9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e',
  project: '/home/alice/project',
};

/** The session id and the scope every session route names. */
const SESSION_PARAMETERS: Schema[] = [
  {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string', pattern: `^[A-Za-z0-9_-]{${Limits.OPAQUE_ID_LENGTH}}$` },
  },
  { name: 'edge_id', in: 'query', required: true, schema: { type: 'string', pattern: '^[1-9][0-9]{0,19}$' } },
  {
    name: 'access_id',
    in: 'query',
    required: true,
    schema: { type: 'string', pattern: `^[A-Za-z0-9_-]{${Limits.OPAQUE_ID_LENGTH}}$` },
  },
];

/** A connector id in the path; a malformed id is 404 like someone else's. */
const CONNECTOR_ID: Schema = {
  name: 'id',
  in: 'path',
  required: true,
  description: "Connector id; a malformed id or another user's connector is 404.",
  schema: { type: 'string' },
};

/** A per-user bound (Limits.CONNECTORS_PER_ACTOR_MAX, ACCESSES_PER_ACTOR_MAX) refuses the creation. */
const LIMIT_REACHED: Schema = {
  description: 'The per-user bound is reached; nothing was created.',
  headers: NO_STORE,
  content: {
    'application/json': {
      schema: { type: 'object', properties: { code: { const: 409 }, message: { const: 'limit reached' } } },
    },
  },
};

function paths(): OpenApiDocument['paths'] {
  const accessBody = jsonBody(ref('AccessInput'), {
    example: Object.fromEntries(Object.entries(SAMPLE_ACCESS).filter(([key]) => key !== 'id')),
  });
  const agentsAndConnectors = ['connectors:update', 'ai.access.use'];
  return {
    [path(EDGE_AGENTS_PATH)]: {
      post: {
        operationId: 'edgeAgentAction',
        tags: ['edge-agents'],
        summary: 'Run one edge agent action',
        description:
          'Validates the body (reference §2.2), checks connector ownership and the saved access, then forwards the ' +
          'action to the edge. Edge-level outcomes (busy, not_found, …) are HTTP 200 with `data.status`.',
        'x-permissions': agentsAndConnectors,
        requestBody: jsonBody(ref('EdgeAgentRequest'), {
          examples: Object.fromEntries(
            EDGE_AGENT_ACTIONS.map((action) => [action, { summary: action, value: actionExample(action) }]),
          ),
        }),
        responses: {
          '200': ok('The edge answered (see `data.status`).', ref('EdgeAgentResult'), {
            version: 1,
            status: 'ok',
            session_id: '7c1e5a9b2d4f6e8a0c3b5d7f9e1a2c4b',
            revision: 3,
            running: true,
          }),
          ...authErrors('400', '404'),
        },
      },
    },
    [path(CONNECTORS_PATH)]: {
      get: {
        operationId: 'listConnectors',
        tags: ['connectors'],
        summary: "List the caller's connectors",
        description:
          `Own connectors only, oldest first, \`limit\` (at most ${Limits.CONNECTORS_LIST_MAX}) per page; ` +
          '`online` means the edge is connected now. `data` is the page; when more follow, the envelope also ' +
          'holds `next_cursor`, the `cursor` of the next page.',
        'x-permissions': agentsAndConnectors,
        parameters: [
          {
            name: 'limit',
            in: 'query',
            required: false,
            description: `Connectors per page, 1 to ${Limits.CONNECTORS_LIST_MAX} (default); anything else is 400 \`invalid page\`.`,
            schema: { type: 'string', pattern: '^[0-9]{1,3}$' },
          },
          {
            name: 'cursor',
            in: 'query',
            required: false,
            description: 'The `next_cursor` of the previous page; a malformed one is 400 `invalid page`.',
            schema: { type: 'string', pattern: '^[1-9][0-9]{0,19}$' },
          },
        ],
        responses: {
          '200': {
            ...ok('One page of connectors.', { type: 'array', items: ref('AgentConnector') }),
            content: {
              'application/json': {
                schema: {
                  ...envelope({ type: 'array', items: ref('AgentConnector') }),
                  properties: {
                    ...(envelope({}).properties as Record<string, Schema>),
                    data: { type: 'array', items: ref('AgentConnector') },
                    next_cursor: { type: 'string', description: 'Present when another page follows.' },
                  },
                },
                example: {
                  code: 200,
                  message: 'success',
                  data: [{ id: '1001', name: 'laptop', online: true, device: 'alice-mbp' }],
                  next_cursor: '1001',
                },
              },
            },
          },
          ...authErrors('400'),
        },
      },
      post: {
        operationId: 'enrollConnector',
        tags: ['connectors'],
        summary: 'Enroll a connector',
        description:
          'Creates a connector owned by the caller and returns its edge token once, with the environment to start the edge-connector.',
        'x-permissions': ['connectors:update'],
        requestBody: jsonBody(ref('EnrollInput'), { example: { name: 'laptop', device: 'alice-mbp' } }),
        responses: {
          '200': ok('The new connector and its credentials.', ref('Enrollment')),
          '409': LIMIT_REACHED,
          ...authErrors('400'),
        },
      },
    },
    [path(`${CONNECTORS_PATH}/{id}`)]: {
      parameters: [CONNECTOR_ID],
      delete: {
        operationId: 'deleteConnector',
        tags: ['connectors'],
        summary: 'Delete a connector',
        description:
          "Deletes the caller's connector with its saved accesses and revokes its credentials: its edge token " +
          'stops working and its NATS user is revoked (the edge is disconnected). Anyone else gets 404.',
        'x-permissions': ['connectors:update'],
        responses: {
          '200': ok('The deleted connector.', ref('ConnectorRecord')),
          ...authErrors('404'),
        },
      },
    },
    [path(`${CONNECTORS_PATH}/{id}/credentials`)]: {
      parameters: [CONNECTOR_ID],
      post: {
        operationId: 'rotateConnectorCredentials',
        tags: ['connectors'],
        summary: "Rotate a connector's credentials",
        description:
          "Mints a new edge token (and NATS user) for the caller's connector and revokes the old ones; other " +
          'connectors are not touched. Anyone else gets 404.',
        'x-permissions': ['connectors:update'],
        responses: {
          '200': ok('The connector and its new credentials.', ref('Enrollment')),
          ...authErrors('404'),
        },
      },
    },
    [path(ACCESSES_PATH)]: {
      get: {
        operationId: 'listAccesses',
        tags: ['agent-accesses'],
        summary: "List the caller's saved accesses",
        'x-permissions': ['ai.access.use'],
        parameters: [{ $ref: '#/components/parameters/Page' }, { $ref: '#/components/parameters/PageSize' }],
        responses: {
          '200': ok('One page of accesses.', ref('AccessList'), {
            items: [SAMPLE_ACCESS],
            total: 1,
            page: 1,
            page_size: Limits.ACCESSES_PAGE_SIZE_DEFAULT,
          }),
          ...authErrors('400'),
        },
      },
      post: {
        operationId: 'createAccess',
        tags: ['agent-accesses'],
        summary: 'Save an access (installation + project on a connector)',
        description: 'The owner is always the caller. An entry stores no credentials and installs nothing.',
        'x-permissions': ['ai.access.use'],
        requestBody: accessBody,
        responses: {
          '200': ok('The saved access.', ref('AgentAccess'), SAMPLE_ACCESS),
          '409': LIMIT_REACHED,
          ...authErrors('400'),
        },
      },
    },
    [path(`${ACCESSES_PATH}/{id}`)]: {
      parameters: [{ $ref: '#/components/parameters/AccessId' }],
      put: {
        operationId: 'updateAccess',
        tags: ['agent-accesses'],
        summary: 'Replace a saved access',
        'x-permissions': ['ai.access.use'],
        requestBody: accessBody,
        responses: {
          '200': ok('The updated access.', ref('AgentAccess'), SAMPLE_ACCESS),
          ...authErrors('400', '404'),
        },
      },
      delete: {
        operationId: 'deleteAccess',
        tags: ['agent-accesses'],
        summary: 'Delete a saved access',
        'x-permissions': ['ai.access.use'],
        responses: {
          '200': ok('The deleted access.', ref('AgentAccess'), SAMPLE_ACCESS),
          ...authErrors('404'),
        },
      },
    },
    [path(`${SESSIONS_PATH}/{id}/history`)]: {
      parameters: SESSION_PARAMETERS,
      get: {
        operationId: 'sessionHistoryPage',
        tags: ['sessions'],
        summary: "One page of a session's journal",
        description:
          '`tail` (newest items), `before` a cursor (older items) or `after` a cursor (every item the rows after it ' +
          'touched, at its current state, plus `removedItemIds`). `data` is `{ok:true, page}` or, when the cursor ' +
          'cannot be used, `{ok:false, reset, snapshot}` with a bounded snapshot inline. Reset reasons: ' +
          "`epoch_changed`, `cursor_ahead`, `cursor_compacted`, `journal_gap`. Someone else's session is 404.",
        'x-permissions': ['ai.access.use'],
        parameters: [
          {
            name: 'direction',
            in: 'query',
            required: false,
            schema: { type: 'string', enum: ['tail', 'before', 'after'], default: 'tail' },
          },
          {
            name: 'cursor',
            in: 'query',
            required: false,
            description: 'Opaque `<epoch>:<sequence>` from a page, batch or event id.',
            schema: { type: 'string', maxLength: Limits.EPOCH_MAX_LENGTH + 21 },
          },
          {
            name: 'limit',
            in: 'query',
            required: false,
            description: 'Outside 1..200 (or not an integer) is 400.',
            schema: {
              type: 'integer',
              minimum: 1,
              maximum: Limits.JOURNAL_PAGE_MAX_LIMIT,
              default: Limits.JOURNAL_PAGE_DEFAULT_LIMIT,
            },
          },
        ],
        responses: {
          '200': ok('A page, or a reset with a bounded snapshot.', { type: 'object', required: ['ok'] }),
          ...authErrors('400', '404'),
        },
      },
    },
    [path(`${SESSIONS_PATH}/{id}/events`)]: {
      parameters: SESSION_PARAMETERS,
      get: {
        operationId: 'sessionEvents',
        tags: ['sessions'],
        summary: "A session's journal as Server-Sent Events",
        description:
          'Events `snapshot`, `batch`, `reset` and `end`, each `data` one JSON object; the event id is the cursor ' +
          '(`<epoch>:<sequence>`). Resume with `Last-Event-ID` (or `?cursor=`). A comment every 15 s keeps the ' +
          'stream alive; it closes when the grant is revoked, the session is deleted or the client stops reading.',
        'x-permissions': ['ai.access.use'],
        parameters: [
          {
            name: 'cursor',
            in: 'query',
            required: false,
            schema: { type: 'string', maxLength: Limits.EPOCH_MAX_LENGTH + 21 },
          },
          { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } },
        ],
        responses: {
          '200': {
            description: 'The event stream (not wrapped in the envelope).',
            headers: NO_STORE,
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...authErrors('400', '404'),
        },
      },
    },
    [path(OPENAPI_DOCUMENT_PATH)]: {
      get: {
        operationId: 'openApiDocument',
        tags: ['documentation'],
        summary: 'This OpenAPI 3.1 document',
        description: 'Not wrapped in the envelope. No authentication.',
        security: [],
        responses: {
          '200': {
            description: 'The document.',
            headers: NO_STORE,
            content: {
              'application/json': { schema: { type: 'object', required: ['openapi', 'info', 'paths'] } },
            },
          },
          '405': responseRef('MethodNotAllowed'),
          '500': responseRef('InternalError'),
        },
      },
    },
    [path(OPENAPI_PAGE_PATH)]: {
      get: {
        operationId: 'openApiPage',
        tags: ['documentation'],
        summary: 'A readable page of this document',
        description: 'Self-contained HTML (no external resources). No authentication.',
        security: [],
        responses: {
          '200': {
            description: 'The page.',
            headers: NO_STORE,
            content: { 'text/html': { schema: { type: 'string' } } },
          },
          '405': responseRef('MethodNotAllowed'),
          '500': responseRef('InternalError'),
        },
      },
    },
  };
}

/** The console's page is revalidated on every load; its hashed assets never change. */
const CONSOLE_PAGE_CACHE = {
  'Cache-Control': {
    description: 'Revalidate on every load.',
    schema: { type: 'string', const: 'no-cache' },
  },
};
const CONSOLE_ASSET_CACHE = {
  'Cache-Control': {
    description: 'Content-hashed name: cache for a year.',
    schema: { type: 'string', const: 'public, max-age=31536000, immutable' },
  },
};
const PUBLIC_ERRORS = { '405': responseRef('MethodNotAllowed'), '500': responseRef('InternalError') };
const NOT_FOUND = errorResponse(404, 'Nothing here (console not built, or no such asset).', ['not found']);

/** The web console (docs/console.md): its page, hashed assets, settings and dev sign-in. */
function consolePaths(): OpenApiDocument['paths'] {
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

/** Fastify answers HEAD for every GET route (headers only); the document says so per route. */
function withHeadOperations(all: OpenApiDocument['paths']): OpenApiDocument['paths'] {
  for (const item of Object.values(all)) {
    const get = item.get;
    if (!get) continue;
    item.head = {
      operationId: `${get.operationId}Head`,
      summary: `Headers of GET: ${get.summary}`,
      tags: get.tags ?? [],
      ...(get.security ? { security: get.security } : {}),
      ...(get['x-permissions'] ? { 'x-permissions': get['x-permissions'] } : {}),
      responses: {
        '200': {
          description: 'The headers GET would send, without a body.',
          headers: (get.responses['200']?.['headers'] as Schema | undefined) ?? NO_STORE,
        },
        default: { description: 'The status and headers GET would send, without a body.', headers: NO_STORE },
      },
    };
  }
  return all;
}

function components(): OpenApiDocument['components'] {
  return {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          'A JWT (HS256 with a shared secret, or verified against a JWKS). `sub` is the actor; the `permissions` claim ' +
          'lists what the caller may do (`x-permissions` of each operation, checked in that order).',
      },
    },
    headers: {
      CacheControl: {
        description: 'Every response, errors included, is no-store.',
        required: true,
        schema: { type: 'string', const: 'no-store' },
      },
      Allow: {
        description: 'The methods the path accepts.',
        required: true,
        schema: { type: 'string', examples: ['GET, HEAD, POST'] },
      },
    },
    parameters: {
      AccessId: {
        name: 'id',
        in: 'path',
        required: true,
        description: 'Saved access id; a malformed id is 404.',
        schema: { type: 'string', pattern: `^[0-9a-f]{${Limits.OPAQUE_ID_LENGTH}}$` },
      },
      Page: {
        name: 'page',
        in: 'query',
        required: false,
        description: 'Page number, from 1 (default 1); anything else is 400 `invalid page`.',
        schema: { type: 'string', pattern: '^[0-9]{1,9}$', default: '1' },
      },
      PageSize: {
        name: 'page_size',
        in: 'query',
        required: false,
        description: `Page size, 1 to ${Limits.ACCESSES_PAGE_SIZE_MAX} (default ${Limits.ACCESSES_PAGE_SIZE_DEFAULT}).`,
        schema: {
          type: 'string',
          pattern: '^[0-9]{1,9}$',
          default: String(Limits.ACCESSES_PAGE_SIZE_DEFAULT),
        },
      },
    },
    responses: {
      BadRequest: errorResponse(400, 'Malformed body or parameter.', [
        'invalid agent request',
        'invalid request',
        'invalid page',
      ]),
      Unauthorized: errorResponse(401, 'Missing, malformed, expired or unverifiable token.', [
        'unauthorized',
      ]),
      Forbidden: errorResponse(403, 'A required permission is missing.', ['forbidden']),
      NotFound: errorResponse(404, 'Not the caller’s connector or access, or no such thing.', [
        'connector not found',
        'access not found',
        'not found',
      ]),
      MethodNotAllowed: errorResponse(
        405,
        'The path exists but not with this method (before authentication).',
        ['method not allowed'],
        { Allow: { $ref: '#/components/headers/Allow' } },
      ),
      InternalError: {
        ...errorResponse(500, 'Unexpected failure; details are logged under the returned error id only.', [
          'internal error',
        ]),
        content: {
          'application/json': {
            schema: ref('ErrorBody'),
            example: {
              code: 500,
              message: 'internal error',
              error_id: '0b7e2c1a-4d5f-4a6b-8c9d-0e1f2a3b4c5d',
            },
          },
        },
      },
      Unavailable: errorResponse(
        503,
        'A service Tether depends on (router, history, key set) did not answer.',
        ['agent unavailable'],
      ),
    },
    schemas: {
      ConsoleConfig: {
        type: 'object',
        required: ['oidc', 'dev_sign_in', 'trace_url_template'],
        properties: {
          oidc: {
            description: 'Authorization code + PKCE at this provider; null: no OpenID sign-in.',
            oneOf: [
              { type: 'null' },
              {
                type: 'object',
                required: ['issuer', 'client_id', 'scopes'],
                properties: {
                  issuer: { type: 'string', description: 'An http(s) URL.' },
                  client_id: { type: 'string' },
                  scopes: { type: 'string' },
                },
              },
            ],
          },
          dev_sign_in: { type: 'boolean', description: 'True only with the development secret.' },
          trace_url_template: {
            type: ['string', 'null'],
            description: "`{trace_id}` is replaced by a turn's trace id.",
          },
        },
      },
      ErrorBody: {
        type: 'object',
        required: ['code', 'message'],
        additionalProperties: false,
        properties: {
          code: { type: 'integer', description: 'The HTTP status again.' },
          message: { type: 'string', description: 'A fixed, generic message; never details of the failure.' },
          error_id: { type: 'string', description: '500 only: the id the failure is logged under.' },
        },
      },
      ...requestSchemas(),
      ...resultSchemas(),
      AgentConnector: {
        type: 'object',
        required: ['id', 'name', 'online'],
        properties: {
          id: { type: 'string', description: 'Connector id (decimal uint64).' },
          name: { type: 'string' },
          online: { type: 'boolean' },
          device: { type: 'string', description: 'Hostname of the edge, when known.' },
        },
      },
      ConnectorRecord: {
        type: 'object',
        required: ['id', 'name'],
        properties: { id: { type: 'string' }, name: { type: 'string' }, device: { type: 'string' } },
      },
      EnrollInput: fromDecoder(
        enrollSchema,
        'Body of POST /api/v1/edge-agents/connectors; unknown fields refused. `name` is not blank and has no control characters; `device` has no control characters and at most 200 UTF-8 bytes.',
      ),
      Enrollment: {
        type: 'object',
        required: ['connector', 'edge_token', 'env'],
        properties: {
          connector: ref('ConnectorRecord'),
          edge_token: { type: 'string', description: 'Shown once: the credential of the edge-connector.' },
          nats_creds: {
            type: 'string',
            description:
              "Shown once, when the deployment runs NATS with per-identity credentials: the edge's own NATS user " +
              'as a `.creds` file; save it and point TETHER_NATS_CREDS at it.',
          },
          env: {
            type: 'object',
            description: 'Environment to start the edge-connector with.',
            required: ['TETHER_EDGE_ID', 'TETHER_EDGE_TOKEN', 'TETHER_NAMESPACE'],
            properties: {
              TETHER_EDGE_ID: { type: 'string' },
              TETHER_EDGE_TOKEN: { type: 'string' },
              TETHER_NAMESPACE: { type: 'string' },
            },
          },
        },
      },
      AccessInput: fromDecoder(
        accessInputSchema,
        'Body of POST and PUT /api/v1/agent-accesses; unknown fields refused. `name` is not blank; no field has control characters; `installation_id` and `project` are bounded in UTF-8 bytes.',
      ),
      AgentAccess: {
        type: 'object',
        required: ['id', 'name', 'kind', 'edge_id', 'installation_id', 'project'],
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          kind: { type: 'string' },
          edge_id: { type: 'string', description: 'Connector id (decimal uint64).' },
          installation_id: { type: 'string' },
          project: { type: 'string' },
        },
      },
      AccessList: {
        type: 'object',
        required: ['items', 'total', 'page', 'page_size'],
        properties: {
          items: { type: 'array', items: ref('AgentAccess') },
          total: { type: 'integer', minimum: 0 },
          page: { type: 'integer', minimum: 1 },
          page_size: { type: 'integer', minimum: 1, maximum: Limits.ACCESSES_PAGE_SIZE_MAX },
        },
      },
    },
  };
}

/** The whole document; pure, so tests can build it without the app. */
export function buildOpenApiDocument(): OpenApiDocument {
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Tether api',
      version: '1',
      description:
        'Control plane for AI coding agents on their owners’ machines. Every success is the envelope ' +
        '`{code:200,message:"success",data}`; every error is `{code,message}` with the HTTP status as `code` and a ' +
        'generic message; every response is `Cache-Control: no-store`. A known path with another method is 405 ' +
        'with `Allow`; an unknown path is 404.',
    },
    servers: [{ url: '/', description: 'This api.' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'edge-agents', description: 'Drive an agent on one of your connectors.' },
      { name: 'connectors', description: 'Your edge connectors.' },
      { name: 'agent-accesses', description: 'Saved installation + project entries.' },
      { name: 'documentation', description: 'This document and its page.' },
      { name: 'sessions', description: "A session's structured journal: pages and live events." },
      { name: 'console', description: 'The web console: its page, assets, settings and sign-in.' },
    ],
    paths: withHeadOperations({ ...paths(), ...consolePaths() }),
    components: components(),
  };
}
