// The pieces every part of the OpenAPI document is built from: paths, envelopes, error
// responses, and the parameters and examples several routes share.
import { z } from 'zod';
import { Limits } from '#contracts';
import { API_PREFIX } from '../../common/routes.js';
import { ref, type Schema } from '../edge-agent.schemas.js';

export const path = (relative: string): string => `/${API_PREFIX}/${relative}`;
export const responseRef = (name: string): Schema => ({ $ref: `#/components/responses/${name}` });
export const NO_STORE = { 'Cache-Control': { $ref: '#/components/headers/CacheControl' } };

/** A schema from one of the api's zod body decoders: the documented body is the decoded one. */
export function fromDecoder(schema: z.ZodType, description: string): Schema {
  const generated = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' }) as Schema;
  delete generated['$schema'];
  return { ...generated, description };
}

export function envelope(data: Schema): Schema {
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

export function ok(description: string, data: Schema, example?: unknown): Schema {
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

export function jsonBody(schema: Schema, extra: Schema = {}): Schema {
  return {
    required: true,
    description: `A single JSON value with Content-Type application/json, at most ${Limits.HTTP_BODY_LIMIT_BYTES} bytes; anything else is 400.`,
    content: { 'application/json': { schema, ...extra } },
  };
}

/** The error responses an authenticated route may give, in the order they are checked. */
export function authErrors(...more: string[]): Record<string, Schema> {
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

export function errorResponse(
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

export const SAMPLE_ACCESS = {
  id: '3f2a9c6b8d1e4f7a0b5c2d9e8f1a6b3c',
  name: 'Main project',
  kind: 'codex',
  edge_id: '1001',
  installation_id: '9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e',
  project: '/home/alice/project',
};

/** The session id and the scope every session route names. */
export const SESSION_PARAMETERS: Schema[] = [
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
export const CONNECTOR_ID: Schema = {
  name: 'id',
  in: 'path',
  required: true,
  description: "Connector id; a malformed id or another user's connector is 404.",
  schema: { type: 'string' },
};

/** A per-user bound (Limits.CONNECTORS_PER_ACTOR_MAX, ACCESSES_PER_ACTOR_MAX) refuses the creation. */
export const LIMIT_REACHED: Schema = {
  description: 'The per-user bound is reached; nothing was created.',
  headers: NO_STORE,
  content: {
    'application/json': {
      schema: { type: 'object', properties: { code: { const: 409 }, message: { const: 'limit reached' } } },
    },
  },
};

/** The console's page is revalidated on every load; its hashed assets never change. */
export const CONSOLE_PAGE_CACHE = {
  'Cache-Control': {
    description: 'Revalidate on every load.',
    schema: { type: 'string', const: 'no-cache' },
  },
};
export const CONSOLE_ASSET_CACHE = {
  'Cache-Control': {
    description: 'Content-hashed name: cache for a year.',
    schema: { type: 'string', const: 'public, max-age=31536000, immutable' },
  },
};
export const PUBLIC_ERRORS = { '405': responseRef('MethodNotAllowed'), '500': responseRef('InternalError') };
export const NOT_FOUND = errorResponse(404, 'Nothing here (console not built, or no such asset).', [
  'not found',
]);

/** The body of POST and PUT of an access: an access without its id. */
export const ACCESS_BODY = jsonBody(ref('AccessInput'), {
  example: Object.fromEntries(Object.entries(SAMPLE_ACCESS).filter(([key]) => key !== 'id')),
});
/** What a caller needs to drive agents and manage connectors. */
export const AGENTS_AND_CONNECTORS = ['connectors:update', 'ai.access.use'];
