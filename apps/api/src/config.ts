import { z } from 'zod';
import { intVar, logLevelVar, natsUrlVar } from '#config';
import { DEFAULT_NAMESPACE } from '#contracts';

/** A shared secret shorter than this is too easy to guess for HS256. */
const JWT_SECRET_MIN_LENGTH = 16;

/** An unset variable and an empty one mean the same: not configured. */
const optionalString = () =>
  z.preprocess((value) => (value === '' ? undefined : value), z.string().optional());

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

const envSchema = z.object({
  TETHER_NATS_URL: natsUrlVar(),
  TETHER_NAMESPACE: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'must be 1-32 characters of a-z, 0-9, _ or -, starting with a letter')
    .default(DEFAULT_NAMESPACE),
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
});

/** How bearer tokens are verified: a shared HS256 secret (development) or a remote JWKS. */
export type JwtKeySource = { kind: 'secret'; secret: string } | { kind: 'jwks'; url: string };

export interface ApiConfig {
  natsUrl: string;
  namespace: string;
  logLevel: z.infer<ReturnType<typeof logLevelVar>>;
  http: { host: string; port: number };
  jwt: { key: JwtKeySource; issuer?: string; audience?: string };
}

export const apiConfigSchema = envSchema
  .superRefine((env, ctx) => {
    const configured = [env.TETHER_JWT_SECRET, env.TETHER_JWT_JWKS_URL].filter(Boolean).length;
    if (configured !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['TETHER_JWT_SECRET'],
        message: 'set exactly one of TETHER_JWT_SECRET (HS256) or TETHER_JWT_JWKS_URL',
      });
    }
  })
  .transform((env): ApiConfig => ({
    natsUrl: env.TETHER_NATS_URL,
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
  }));
