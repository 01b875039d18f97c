import { z } from 'zod';
import { DEFAULT_NAMESPACE, NAMESPACE_PATTERN } from '#contracts';

// Configuration is read from the environment once, at boot, validated with a schema, and then
// injected as a typed object. Nothing else in Tether reads process.env.

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses `env` with `schema`; a bad value fails with a message that names the variable. */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new ConfigError(problemsOf(parsed.error));
}

/** What `loadConfig` would refuse `env` for, each naming its variable; empty when it is valid. */
export function configProblems(schema: z.ZodType, env: Record<string, string | undefined>): string[] {
  const parsed = schema.safeParse(env);
  return parsed.success ? [] : problemsOf(parsed.error);
}

function problemsOf(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || '(env)'}: ${issue.message}`);
}

/** A URL with one of the given protocols. */
export function urlVar(protocols: string[], fallback: string) {
  return z
    .string()
    .default(fallback)
    .refine(
      (value) => {
        try {
          return protocols.includes(new URL(value).protocol);
        } catch {
          return false;
        }
      },
      `must be a ${protocols.join(' or ')} URL`,
    );
}

export function intVar(fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return z.coerce.number().int().min(min).max(max).default(fallback);
}

export function boolVar(fallback: boolean) {
  return z
    .enum(['1', '0', 'true', 'false', 'yes', 'no'])
    .default(fallback ? 'true' : 'false')
    .transform((value) => value === '1' || value === 'true' || value === 'yes');
}

/** The connection settings every service shares. */
export const redisUrlVar = () => urlVar(['redis:', 'rediss:'], 'redis://127.0.0.1:6379');
export const databaseUrlVar = () =>
  urlVar(['postgres:', 'postgresql:'], 'postgresql://postgres@127.0.0.1:5432/tether');
/** TETHER_NAMESPACE: the prefix of every subject, stream and key of one Tether installation. */
export const namespaceVar = () =>
  z
    .string()
    .regex(NAMESPACE_PATTERN, 'must be 1-32 characters of a-z, 0-9, _ or -, starting with a letter')
    .default(DEFAULT_NAMESPACE);
export const logLevelVar = () => z.enum(['error', 'warn', 'log', 'debug', 'verbose']).default('log');

export { optionalStringVar, readableFileVar } from './optional-vars.js';
export { natsUrlVar, natsEnv, checkNatsEnv, natsSettings, natsSettingsFromUrl } from './nats.js';
export type { NatsEnv, NatsSettings, NatsTlsSettings } from './nats.js';
export {
  sessionsStreamEnv,
  auditStreamEnv,
  sessionsStreamSettings,
  auditStreamSettings,
  AUDIT_STREAM_DEFAULTS,
  parseDuration,
  parseSize,
} from './jetstream.js';
export type { StreamSettings, JetStreamSettings, SessionsStreamEnv, AuditStreamEnv } from './jetstream.js';

/** Characters a journal secret needs at least: the key is derived from it, never stretched. */
const JOURNAL_KEY_MIN_LENGTH = 32;
/** Previous journal secrets kept readable at once (one rotation in progress, plus one spare). */
const JOURNAL_PREVIOUS_KEYS_MAX = 4;

/**
 * `TETHER_JOURNAL_KEY`: the secret the journal's content key is derived from (router: seals;
 * history and the router: open). Required: conversation content never rests on JetStream in
 * plain text (docs/security.md "Content encryption").
 */
export const journalKeyVar = () =>
  z.string().min(JOURNAL_KEY_MIN_LENGTH, `must be at least ${JOURNAL_KEY_MIN_LENGTH} characters`);

/**
 * `TETHER_JOURNAL_PREVIOUS_KEYS`: comma-separated secrets that only open rows sealed before a
 * rotation; empty by default.
 */
export const journalPreviousKeysVar = () =>
  z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((key) => key.trim())
        .filter(Boolean),
    )
    .pipe(
      z
        .array(journalKeyVar())
        .max(JOURNAL_PREVIOUS_KEYS_MAX, `at most ${JOURNAL_PREVIOUS_KEYS_MAX} previous keys`),
    );

export {
  nodeEnvVar,
  refuseWeakSecrets,
  weakSecretReason,
  DEVELOPMENT_SECRETS,
  PRODUCTION_SECRET_MIN_LENGTH,
} from './production.js';
export { envVariables } from './reference.js';
export type { EnvVariable, VariableDoc, VariableDocs } from './reference.js';
export { SHARED_VARIABLE_DOCS } from './variables.js';
