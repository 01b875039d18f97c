// The api's own routes in the OpenAPI document, one builder per area; openapi.document.ts
// composes them in this order, which is the order of the document's keys.
import { EDGE_AGENT_ACTIONS, Limits } from '#contracts';
import {
  ACCESSES_PATH,
  CONNECTORS_PATH,
  EDGE_AGENTS_PATH,
  OPENAPI_DOCUMENT_PATH,
  OPENAPI_PAGE_PATH,
  SESSIONS_PATH,
} from '../../common/routes.js';
import { actionExample, ref, type Schema } from '../edge-agent.schemas.js';
import type { OpenApiDocument } from '../openapi.document.js';
import {
  ACCESS_BODY,
  AGENTS_AND_CONNECTORS,
  authErrors,
  envelope,
  CONNECTOR_ID,
  jsonBody,
  LIMIT_REACHED,
  NO_STORE,
  ok,
  path,
  responseRef,
  SAMPLE_ACCESS,
  SESSION_PARAMETERS,
} from './shared.js';

/** POST /api/v1/edge-agents: every action of the edge-agent contract. */
export function edgeAgentPaths(): OpenApiDocument['paths'] {
  return {
    [path(EDGE_AGENTS_PATH)]: {
      post: {
        operationId: 'edgeAgentAction',
        tags: ['edge-agents'],
        summary: 'Run one edge agent action',
        description:
          'Validates the body (reference §2.2), checks connector ownership and the saved access, then forwards the ' +
          'action to the edge. Edge-level outcomes (busy, not_found, …) are HTTP 200 with `data.status`.',
        'x-permissions': AGENTS_AND_CONNECTORS,
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
  };
}

/** The connectors: list them, enroll one. */
export function connectorListPaths(): OpenApiDocument['paths'] {
  return {
    [path(CONNECTORS_PATH)]: {
      get: {
        operationId: 'listConnectors',
        tags: ['connectors'],
        summary: "List the caller's connectors",
        description:
          `Own connectors only, oldest first, \`limit\` (at most ${Limits.CONNECTORS_LIST_MAX}) per page; ` +
          '`online` means the edge is connected now. `data` is the page; when more follow, the envelope also ' +
          'holds `next_cursor`, the `cursor` of the next page.',
        'x-permissions': AGENTS_AND_CONNECTORS,
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
  };
}

/** One connector: delete it, rotate its credentials. */
export function connectorPaths(): OpenApiDocument['paths'] {
  return {
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
  };
}

/** Saved agent accesses. */
export function accessPaths(): OpenApiDocument['paths'] {
  return {
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
        requestBody: ACCESS_BODY,
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
        requestBody: ACCESS_BODY,
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
  };
}

/** A session's journal: history pages and live events. */
export function sessionPaths(): OpenApiDocument['paths'] {
  return {
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
  };
}

/** This document and its page. */
export function documentationPaths(): OpenApiDocument['paths'] {
  return {
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
