// The api's OpenAPI 3.1 document, built once from the route table, the api's own body decoders
// and the contract constants. The openapi integration test compares its paths with the routes
// Fastify actually serves, so a route added without documentation fails the build.
import { type Schema } from './edge-agent.schemas.js';
import {
  accessPaths,
  connectorListPaths,
  connectorPaths,
  documentationPaths,
  edgeAgentPaths,
  sessionPaths,
} from './document/api-paths.js';
import { components } from './document/components.js';
import { consoleApiPaths, consolePagePaths } from './document/console-paths.js';
import { NO_STORE } from './document/shared.js';

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
    paths: withHeadOperations({
      ...edgeAgentPaths(),
      ...connectorListPaths(),
      ...connectorPaths(),
      ...accessPaths(),
      ...sessionPaths(),
      ...documentationPaths(),
      ...consolePagePaths(),
      ...consoleApiPaths(),
    }),
    components: components(),
  };
}
