import type { VariableDocs } from '#config';

/** What the api's own variables mean (docs/configuration.md is generated from this and config.ts). */
export const API_VARIABLE_DOCS: VariableDocs = {
  TETHER_HTTP_HOST: { meaning: 'Address the public HTTP API listens on.' },
  TETHER_HTTP_PORT: {
    meaning: 'Port of the public HTTP API (`/api/v1/...`); ops endpoints are on `TETHER_METRICS_PORT`.',
  },
  TETHER_JWT_SECRET: {
    meaning:
      'HS256 secret bearer tokens are verified with; set exactly one of this or `TETHER_JWT_JWKS_URL`. At least 16 characters, 32 in production, never the development value.',
  },
  TETHER_JWT_JWKS_URL: {
    meaning:
      'JWKS URL of the identity provider whose tokens the api accepts (instead of `TETHER_JWT_SECRET`).',
  },
  TETHER_JWT_ISSUER: { meaning: "When set, a token's `iss` must equal it." },
  TETHER_JWT_AUDIENCE: { meaning: "When set, a token's `aud` must contain it." },
  TETHER_SSE_HEARTBEAT_MS: {
    meaning: 'Comment line interval on an idle SSE stream, so proxies keep it open.',
  },
  TETHER_SSE_REAUTHORIZE_MS: {
    meaning: 'How often an open SSE stream re-checks its grant (revoked access, expired token).',
  },
  TETHER_AUTHORIZE_CACHE_MS: {
    meaning:
      'How long a positive authorization decision is reused without asking history (at most 2000; 0 turns the cache off). Revocation drops it at once.',
  },
  TETHER_AUTHORIZE_OUTAGE_MS: {
    meaning:
      'How long a remembered positive authorization may stand in while history cannot be reached (down, restarting, its database unreachable), so poll, watch and send on a live session keep working (at most 3600000; 0: every call answers 503 until history is back). Revocation drops it at once.',
  },
  TETHER_CONSOLE_OIDC_CLIENT_ID: {
    meaning:
      'OpenID Connect client id the console signs in with (authorization code + PKCE at `TETHER_JWT_ISSUER`); needs the JWKS mode. Unset: no OIDC sign-in.',
  },
  TETHER_CONSOLE_OIDC_SCOPES: {
    meaning: 'Scopes the console asks the OpenID provider for, space-separated.',
  },
  TETHER_CONSOLE_TRACE_URL: {
    meaning:
      "URL template of the console's per-turn trace link; `{trace_id}` is replaced by the turn's trace id (for example a Jaeger trace URL). Unset: no link.",
  },
  TETHER_CONSOLE_DIR: {
    meaning: 'Folder of the built console the api serves at `/` (default `dist/console`).',
  },
  TETHER_USER_RATE_PER_S: {
    meaning:
      'Requests per second one user may make to this api replica (token bucket); over it the api answers 429 with `Retry-After` (docs/security.md "Limits per user").',
  },
  TETHER_USER_RATE_BURST: {
    meaning: 'Burst size of the per-user request bucket.',
  },
  TETHER_EDGE_RATE_PER_S: {
    meaning: 'Requests per second this api replica forwards to one edge, whoever sends them.',
  },
  TETHER_EDGE_RATE_BURST: {
    meaning: 'Burst size of the per-edge request bucket.',
  },
  TETHER_USER_SSE_STREAMS_MAX: {
    meaning: 'Live-event (SSE) streams one user may hold open on this api replica at once.',
  },
  TETHER_EDGE_SSE_STREAMS_MAX: {
    meaning: "Live-event (SSE) streams open on one edge's sessions at once, on this api replica.",
  },
  TETHER_USER_WATCHES_MAX: {
    meaning: '`watch` calls one user may have waiting at once on this api replica.',
  },
  TETHER_EDGE_WATCHES_MAX: {
    meaning: '`watch` calls waiting on one edge at once, on this api replica.',
  },
};
