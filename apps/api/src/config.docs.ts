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
};
