// The OpenAPI document's components: security, shared headers, parameters, responses, schemas.
import { Limits } from '#contracts';
import { accessInputSchema } from '../../accesses/accesses.schemas.js';
import { enrollSchema } from '../../connectors/connectors.schemas.js';
import { ref, requestSchemas, resultSchemas, type Schema } from '../edge-agent.schemas.js';
import type { OpenApiDocument } from '../openapi.document.js';
import { errorResponse, fromDecoder } from './shared.js';

export function components(): OpenApiDocument['components'] {
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
    responses: responses(),
    schemas: { ...coreSchemas(), ...accountSchemas() },
  };
}

/** The error responses every route refers to. */
function responses(): Record<string, Schema> {
  return {
    BadRequest: errorResponse(400, 'Malformed body or parameter.', [
      'invalid agent request',
      'invalid request',
      'invalid page',
    ]),
    Unauthorized: errorResponse(401, 'Missing, malformed, expired or unverifiable token.', ['unauthorized']),
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
  };
}

/** The console settings, the error body and the connectors. */
function coreSchemas(): Record<string, Schema> {
  return {
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
  };
}

/** Enrollment and the saved accesses. */
function accountSchemas(): Record<string, Schema> {
  return {
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
  };
}
