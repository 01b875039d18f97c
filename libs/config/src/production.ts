import { z } from 'zod';

// Safe defaults: the images set NODE_ENV=production, and a production process refuses to start
// with a secret anyone can read in this repository, an empty one, or one short enough to guess.

/** `production` turns on the secret checks below; anything else is a development or test run. */
export const nodeEnvVar = () => z.enum(['production', 'development', 'test']).default('development');

/**
 * 32 characters: an HS256 key should carry at least the 256 bits of its hash (RFC 7518 §3.2), and
 * HKDF inputs and HMAC keys of the edge tokens are held to the same bar.
 */
export const PRODUCTION_SECRET_MIN_LENGTH = 32;

/**
 * The development values published in this repository (docker-compose.yml, the stack script,
 * `npm run token`): whoever reads the code can sign tokens or read history made with them.
 */
export const DEVELOPMENT_SECRETS: readonly string[] = [
  'tether-dev-secret-change-me',
  'tether-dev-edge-secret-change-me',
  'tether-dev-history-key-change-me-0123456789',
  'tether-dev-journal-key-change-me-0123456789',
];

/** Fewer distinct characters than this is a placeholder (`xxxx…`, `0000…`), not a secret. */
const DISTINCT_CHARACTERS_MIN = 8;

/** Why `value` is not a production secret, or null when it may be one. */
export function weakSecretReason(value: string | undefined): string | null {
  if (value === undefined || value === '') return 'must be set in production (NODE_ENV=production)';
  if (DEVELOPMENT_SECRETS.includes(value) || /change-?me/i.test(value)) {
    return 'is a development value published with Tether; set a generated secret in production';
  }
  if (value.length < PRODUCTION_SECRET_MIN_LENGTH) {
    return `must be at least ${PRODUCTION_SECRET_MIN_LENGTH} characters in production`;
  }
  if (new Set(value).size < DISTINCT_CHARACTERS_MIN) return 'is a placeholder, not a secret';
  return null;
}

/**
 * A schema refinement: with NODE_ENV=production every named secret must be a real one. `optional`
 * names may be unset (the api's JWT secret when a JWKS URL verifies tokens instead).
 */
export function refuseWeakSecrets(required: readonly string[], optional: readonly string[] = []) {
  return (env: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    if (env.NODE_ENV !== 'production') return;
    for (const name of [...required, ...optional]) {
      const value = env[name];
      if (optional.includes(name) && (value === undefined || value === '')) continue;
      const reason = weakSecretReason(typeof value === 'string' ? value : undefined);
      if (reason) ctx.addIssue({ code: 'custom', path: [name], message: reason });
    }
  };
}
