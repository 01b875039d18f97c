// Every public path, named once: controllers route with these and the exception filter uses the
// same table to answer a wrong method with 405 and an `Allow` header (reference §2.1), which
// Nest would otherwise answer as an unknown route.

export const API_PREFIX = 'api/v1';
export const EDGE_AGENTS_PATH = 'edge-agents';
export const CONNECTORS_PATH = 'edge-agents/connectors';
export const ACCESSES_PATH = 'agent-accesses';
export const SESSIONS_PATH = 'sessions';
export const OPENAPI_DOCUMENT_PATH = 'openapi.json';
export const OPENAPI_PAGE_PATH = 'docs';
export const CONSOLE_ASSETS_PATH = 'assets/:name';
export const CONSOLE_CONFIG_PATH = 'console/config';
export const CONSOLE_DEV_TOKEN_PATH = 'console/dev-token';

interface RouteMethods {
  pattern: RegExp;
  allow: readonly string[];
}

const ROUTE_METHODS: readonly RouteMethods[] = [
  { pattern: /^\/api\/v1\/edge-agents$/, allow: ['POST'] },
  { pattern: /^\/api\/v1\/edge-agents\/connectors$/, allow: ['GET', 'HEAD', 'POST'] },
  { pattern: /^\/api\/v1\/edge-agents\/connectors\/[^/]+$/, allow: ['DELETE'] },
  { pattern: /^\/api\/v1\/edge-agents\/connectors\/[^/]+\/credentials$/, allow: ['POST'] },
  { pattern: /^\/api\/v1\/agent-accesses$/, allow: ['GET', 'HEAD', 'POST'] },
  { pattern: /^\/api\/v1\/agent-accesses\/[^/]+$/, allow: ['PUT', 'DELETE'] },
  { pattern: /^\/api\/v1\/sessions\/[^/]+\/history$/, allow: ['GET', 'HEAD'] },
  { pattern: /^\/api\/v1\/sessions\/[^/]+\/events$/, allow: ['GET', 'HEAD'] },
  { pattern: /^\/api\/v1\/openapi\.json$/, allow: ['GET', 'HEAD'] },
  { pattern: /^\/api\/v1\/docs$/, allow: ['GET', 'HEAD'] },
  { pattern: /^\/$/, allow: ['GET', 'HEAD'] },
  { pattern: /^\/assets\/[^/]+$/, allow: ['GET', 'HEAD'] },
  { pattern: /^\/api\/v1\/console\/config$/, allow: ['GET', 'HEAD'] },
  { pattern: /^\/api\/v1\/console\/dev-token$/, allow: ['POST'] },
];

/** The methods a known path accepts, or null for an unknown path. */
export function allowedMethods(url: string): readonly string[] | null {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return ROUTE_METHODS.find((route) => route.pattern.test(path))?.allow ?? null;
}

export function isEdgeAgentsPath(url: string): boolean {
  const query = url.indexOf('?');
  return (query === -1 ? url : url.slice(0, query)) === `/${API_PREFIX}/${EDGE_AGENTS_PATH}`;
}

/** The first path segments after the prefix whose routes authenticate (AuthGuard) every call. */
const GUARDED_SEGMENTS: readonly string[] = [EDGE_AGENTS_PATH, ACCESSES_PATH, SESSIONS_PATH];

/** Whether `url` is a route of a guarded controller, so the caller's request rate applies. */
export function isGuardedPath(url: string): boolean {
  const prefix = `/${API_PREFIX}/`;
  if (!url.startsWith(prefix)) return false;
  const rest = url.slice(prefix.length);
  return GUARDED_SEGMENTS.some(
    (segment) => rest.startsWith(segment) && ['', '/', '?'].includes(rest.charAt(segment.length)),
  );
}
