import { z } from 'zod';
import {
  checkNatsEnv,
  intVar,
  logLevelVar,
  namespaceVar,
  natsEnv,
  auditStreamEnv,
  auditStreamSettings,
  natsSettings,
  nodeEnvVar,
  refuseWeakSecrets,
  type NatsSettings,
  type StreamSettings,
} from '#config';
import { metricsPortVar, shutdownDelayVar, shutdownGraceVar, type MetricsPort } from '#telemetry';
import type { Rate } from './limits/token-bucket.js';

/** A shared secret shorter than this is too easy to guess for HS256. */
const JWT_SECRET_MIN_LENGTH = 16;

/** An unset variable and an empty one mean the same: not configured. */
const optionalString = () =>
  z.preprocess((value) => (value === '' ? undefined : value), z.string().optional());

/** A comment line this often keeps proxies from closing an idle SSE stream. */
export const SSE_HEARTBEAT_DEFAULT_MS = 15_000;
/** An open SSE stream re-checks its grant (revoked access, expired token) this often. */
export const SSE_REAUTHORIZE_DEFAULT_MS = 60_000;
/** Bounds of both SSE timers: not a busy loop, and not so long that a revoked grant lingers. */
const SSE_TIMER_MIN_MS = 100;
const SSE_TIMER_MAX_MS = 10 * 60_000;
/**
 * How long a positive authorization decision may be reused without asking history. Revocation
 * drops it at once through history's grants-changed notice; this bounds a notice that was lost.
 */
export const AUTHORIZE_CACHE_DEFAULT_MS = 2_000;
const AUTHORIZE_CACHE_MAX_MS = 2_000;
/**
 * How long a remembered "yes" may stand in while history cannot answer at all (down, restarting,
 * its database gone), so poll, watch and send on a live session go on through a history outage
 * (docs/reliability.md). Safe because every revocation goes through history, which tells the api
 * (and a notice lost with the connection drops everything); bounded for the notice lost by a
 * history that died between its commit and its publish.
 */
export const AUTHORIZE_OUTAGE_DEFAULT_MS = 5 * 60_000;
const AUTHORIZE_OUTAGE_MAX_MS = 60 * 60_000;

/**
 * Per-user and per-edge limits (docs/security.md "Limits per user"). A console polling, watching
 * and sending stays far below 20 requests a second (a burst of 60 covers a page load or a file
 * transfer's first chunks; 128 KiB chunks at 20 a second move 2.5 MiB/s), while a script
 * flooding the api is held to it (bench/flood.ts: under the flood the other user's p95 rose
 * about 2.7x at 50/200, about 2x at 20/60, 9x with no limits); the stream and watch bounds are well above what one person's tabs
 * open, far below the 2,000 streams one user opened in the flood this guards against.
 */
export const USER_LIMITS_DEFAULTS: UserLimitsConfig = {
  userRate: { perSecond: 20, burst: 60 },
  edgeRate: { perSecond: 100, burst: 400 },
  userStreams: 32,
  edgeStreams: 64,
  userWatches: 16,
  edgeWatches: 32,
};
const RATE_MAX_PER_S = 100_000;
const HELD_MAX = 100_000;
/**
 * The development stack's shared secret (`npm run stack`, `npm run token`). Everyone can read it,
 * so an api that runs with it is a development api: only then does the console offer its
 * development sign-in and the api mint tokens for it.
 */
export const DEVELOPMENT_JWT_SECRET = 'tether-dev-secret-change-me';
/** Where the trace id goes in TETHER_CONSOLE_TRACE_URL. */
export const TRACE_ID_PLACEHOLDER = '{trace_id}';
/** OIDC scope tokens (RFC 6749 §3.3): printable ASCII without space, quote or backslash. */
const SCOPES_PATTERN = /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/;

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

const envSchema = z.object({
  NODE_ENV: nodeEnvVar(),
  ...natsEnv,
  ...auditStreamEnv,
  TETHER_NAMESPACE: namespaceVar(),
  TETHER_LOG_LEVEL: logLevelVar(),
  TETHER_HTTP_HOST: z.string().min(1).default('0.0.0.0'),
  TETHER_HTTP_PORT: intVar(8080, 0, 65_535),
  TETHER_JWT_SECRET: optionalString().pipe(
    z.string().min(JWT_SECRET_MIN_LENGTH, `must be at least ${JWT_SECRET_MIN_LENGTH} characters`).optional(),
  ),
  TETHER_JWT_JWKS_URL: optionalString().refine(
    (value) => value === undefined || isHttpUrl(value),
    'must be an http:// or https:// URL',
  ),
  TETHER_JWT_ISSUER: optionalString(),
  TETHER_JWT_AUDIENCE: optionalString(),
  // The console's sign-in (docs/console.md): its OIDC client id at the issuer TETHER_JWT_ISSUER.
  TETHER_CONSOLE_OIDC_CLIENT_ID: optionalString().pipe(
    z
      .string()
      .max(256)
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
      .optional(),
  ),
  TETHER_CONSOLE_OIDC_SCOPES: optionalString().pipe(
    z
      .string()
      .max(1024)
      .regex(SCOPES_PATTERN, 'must be space-separated scope tokens')
      .default('openid profile'),
  ),
  // A link from each turn to its trace, e.g. http://jaeger:16686/trace/{trace_id}.
  TETHER_CONSOLE_TRACE_URL: optionalString().refine(
    (value) => value === undefined || (isHttpUrl(value) && value.includes(TRACE_ID_PLACEHOLDER)),
    `must be an http:// or https:// URL containing ${TRACE_ID_PLACEHOLDER}`,
  ),
  // The built console (npm run build:console); unset: dist/console beside the api's build.
  TETHER_CONSOLE_DIR: optionalString(),
  // SSE timers (docs/contract.md "Live events"); tests shorten them, deployments keep the defaults.
  TETHER_SSE_HEARTBEAT_MS: intVar(SSE_HEARTBEAT_DEFAULT_MS, SSE_TIMER_MIN_MS, SSE_TIMER_MAX_MS),
  TETHER_SSE_REAUTHORIZE_MS: intVar(SSE_REAUTHORIZE_DEFAULT_MS, SSE_TIMER_MIN_MS, SSE_TIMER_MAX_MS),
  // 0 turns the authorization cache off (every call asks history, as before).
  TETHER_AUTHORIZE_CACHE_MS: intVar(AUTHORIZE_CACHE_DEFAULT_MS, 0, AUTHORIZE_CACHE_MAX_MS),
  // 0: every call fails (503) while history cannot be reached, as before.
  TETHER_AUTHORIZE_OUTAGE_MS: intVar(AUTHORIZE_OUTAGE_DEFAULT_MS, 0, AUTHORIZE_OUTAGE_MAX_MS),
  TETHER_USER_RATE_PER_S: intVar(USER_LIMITS_DEFAULTS.userRate.perSecond, 1, RATE_MAX_PER_S),
  TETHER_USER_RATE_BURST: intVar(USER_LIMITS_DEFAULTS.userRate.burst, 1, RATE_MAX_PER_S),
  TETHER_EDGE_RATE_PER_S: intVar(USER_LIMITS_DEFAULTS.edgeRate.perSecond, 1, RATE_MAX_PER_S),
  TETHER_EDGE_RATE_BURST: intVar(USER_LIMITS_DEFAULTS.edgeRate.burst, 1, RATE_MAX_PER_S),
  TETHER_USER_SSE_STREAMS_MAX: intVar(USER_LIMITS_DEFAULTS.userStreams, 1, HELD_MAX),
  TETHER_EDGE_SSE_STREAMS_MAX: intVar(USER_LIMITS_DEFAULTS.edgeStreams, 1, HELD_MAX),
  TETHER_USER_WATCHES_MAX: intVar(USER_LIMITS_DEFAULTS.userWatches, 1, HELD_MAX),
  TETHER_EDGE_WATCHES_MAX: intVar(USER_LIMITS_DEFAULTS.edgeWatches, 1, HELD_MAX),
  /** /metrics, /healthz, /readyz: never on the public port (docs/observability.md). */
  TETHER_METRICS_PORT: metricsPortVar(9464),
  TETHER_SHUTDOWN_GRACE_MS: shutdownGraceVar(),
  TETHER_SHUTDOWN_DELAY_MS: shutdownDelayVar(),
});

/** How bearer tokens are verified: a shared HS256 secret (development) or a remote JWKS. */
export type JwtKeySource = { kind: 'secret'; secret: string } | { kind: 'jwks'; url: string };

export interface ApiConfig {
  nats: NatsSettings;
  /** The audit stream it creates when missing; absent (a config built by hand): the defaults. */
  auditStream?: StreamSettings;
  namespace: string;
  logLevel: z.infer<ReturnType<typeof logLevelVar>>;
  http: { host: string; port: number };
  jwt: { key: JwtKeySource; issuer?: string; audience?: string };
  /** SSE timers; absent (a config built by hand, as in-process tests do): the defaults. */
  sse?: SseConfig;
  /**
   * Reuse of positive authorization decisions, ms (docs/contract.md "Authorization"). Absent or 0
   * (a config built by hand, as in-process tests whose stand-in history sends no notices): off.
   */
  authorizeCacheMs?: number;
  /** How long a remembered "yes" stands in while history cannot answer, ms; absent or 0: never. */
  authorizeOutageMs?: number;
  /** The ops port; absent (a config built by hand): no ops server. */
  metricsPort?: MetricsPort;
  /** SIGTERM handling (docs/operations.md); absent (a config built by hand): the defaults. */
  shutdown?: { graceMs: number; delayMs: number };
  /** Per-user and per-edge limits; absent (a config built by hand): USER_LIMITS_DEFAULTS. */
  limits?: UserLimitsConfig;
  /** The web console; absent (a config built by hand, as in-process tests do): no OIDC, no traces. */
  console?: ConsoleConfig;
}

export interface UserLimitsConfig {
  userRate: Rate;
  edgeRate: Rate;
  userStreams: number;
  edgeStreams: number;
  userWatches: number;
  edgeWatches: number;
}

/** What the console needs at run time; its public part is served at /api/v1/console/config. */
export interface ConsoleConfig {
  /** Authorization code + PKCE at the api's own token issuer; absent: no OIDC sign-in. */
  oidc?: { issuer: string; clientId: string; scopes: string };
  traceUrlTemplate?: string;
  /** Folder of the built console; absent: dist/console. */
  assetsDir?: string;
}

export interface SseConfig {
  heartbeatMs: number;
  reauthorizeMs: number;
}

export const apiConfigSchema = envSchema
  .superRefine(checkNatsEnv)
  .superRefine((env, ctx) => {
    const configured = [env.TETHER_JWT_SECRET, env.TETHER_JWT_JWKS_URL].filter(Boolean).length;
    if (configured !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['TETHER_JWT_SECRET'],
        message: 'set exactly one of TETHER_JWT_SECRET (HS256) or TETHER_JWT_JWKS_URL',
      });
    }
    // The console signs in at the issuer whose tokens the api verifies: there must be one.
    if (env.TETHER_CONSOLE_OIDC_CLIENT_ID !== undefined) {
      if (!env.TETHER_JWT_JWKS_URL || !env.TETHER_JWT_ISSUER || !isHttpUrl(env.TETHER_JWT_ISSUER)) {
        ctx.addIssue({
          code: 'custom',
          path: ['TETHER_CONSOLE_OIDC_CLIENT_ID'],
          message: 'needs TETHER_JWT_JWKS_URL and an http(s) TETHER_JWT_ISSUER (the OpenID provider)',
        });
      }
    }
  })
  .superRefine(refuseWeakSecrets([], ['TETHER_JWT_SECRET']))
  .transform((env): ApiConfig => ({
    nats: natsSettings(env),
    auditStream: auditStreamSettings(env),
    namespace: env.TETHER_NAMESPACE,
    logLevel: env.TETHER_LOG_LEVEL,
    http: { host: env.TETHER_HTTP_HOST, port: env.TETHER_HTTP_PORT },
    jwt: {
      key: env.TETHER_JWT_SECRET
        ? { kind: 'secret', secret: env.TETHER_JWT_SECRET }
        : { kind: 'jwks', url: env.TETHER_JWT_JWKS_URL ?? '' },
      issuer: env.TETHER_JWT_ISSUER,
      audience: env.TETHER_JWT_AUDIENCE,
    },
    sse: { heartbeatMs: env.TETHER_SSE_HEARTBEAT_MS, reauthorizeMs: env.TETHER_SSE_REAUTHORIZE_MS },
    authorizeCacheMs: env.TETHER_AUTHORIZE_CACHE_MS,
    authorizeOutageMs: env.TETHER_AUTHORIZE_OUTAGE_MS,
    limits: {
      userRate: { perSecond: env.TETHER_USER_RATE_PER_S, burst: env.TETHER_USER_RATE_BURST },
      edgeRate: { perSecond: env.TETHER_EDGE_RATE_PER_S, burst: env.TETHER_EDGE_RATE_BURST },
      userStreams: env.TETHER_USER_SSE_STREAMS_MAX,
      edgeStreams: env.TETHER_EDGE_SSE_STREAMS_MAX,
      userWatches: env.TETHER_USER_WATCHES_MAX,
      edgeWatches: env.TETHER_EDGE_WATCHES_MAX,
    },
    metricsPort: env.TETHER_METRICS_PORT,
    shutdown: { graceMs: env.TETHER_SHUTDOWN_GRACE_MS, delayMs: env.TETHER_SHUTDOWN_DELAY_MS },
    console: {
      ...(env.TETHER_CONSOLE_OIDC_CLIENT_ID && env.TETHER_JWT_ISSUER
        ? {
            oidc: {
              issuer: env.TETHER_JWT_ISSUER,
              clientId: env.TETHER_CONSOLE_OIDC_CLIENT_ID,
              scopes: env.TETHER_CONSOLE_OIDC_SCOPES,
            },
          }
        : {}),
      ...(env.TETHER_CONSOLE_TRACE_URL ? { traceUrlTemplate: env.TETHER_CONSOLE_TRACE_URL } : {}),
      ...(env.TETHER_CONSOLE_DIR ? { assetsDir: env.TETHER_CONSOLE_DIR } : {}),
    },
  }));
