import { z } from 'zod';

/**
 * The operator's share of a JetStream stream's configuration: what a service puts on a stream it
 * creates. An existing stream keeps whatever the operator gave it (libs/messaging jetstream.ts);
 * these settings never change one.
 */
export interface StreamSettings {
  /** Servers holding a copy: 1 on one server, 3 on a production cluster (one may be lost). */
  replicas: number;
  /** Messages older than this leave the stream; 0: no age limit. */
  maxAgeMs: number;
  /** The oldest messages leave once the stream holds this much; 0: no size limit. */
  maxBytes: number;
  storage: 'file' | 'memory';
}

export interface JetStreamSettings {
  sessions: StreamSettings;
  audit: StreamSettings;
}

/** A stream copy per server of a 3-node cluster at most: JetStream allows 5, nothing here needs it. */
const REPLICAS_MAX = 5;

/**
 * Journal rows and lifecycle events are kept 14 days: history folds rows into Postgres within
 * seconds, so the stream is a replay buffer, and two weeks cover a history outage over a long
 * weekend, a subscriber (docs/events.md) away as long, and the router's read of an idle
 * session's last row (who owns it, its fence) long after its edge forgot it (24 h).
 */
export const SESSIONS_STREAM_MAX_AGE_DEFAULT = '14d';
/**
 * Audit records leave once history stored them (work-queue retention); the age limit only bounds
 * what piles up while no history runs at all. 30 days: longer than any outage worth surviving.
 */
export const AUDIT_STREAM_MAX_AGE_DEFAULT = '30d';
/**
 * No size limit by default: JetStream reserves a stream's `max_bytes` against the server's
 * storage when the stream is created, so no single figure fits every disk (a large one fails
 * creation on a small server). The age limit bounds growth; set a size for your disks.
 */
export const STREAM_MAX_BYTES_DEFAULT = '0';

const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const DURATION_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const SIZE = /^(\d+)(B|KiB|MiB|GiB|TiB)?$/;
const SIZE_BYTES: Record<string, number> = { B: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40 };

/** `0` (no limit) or a whole number with a unit: `90s`, `36h`, `14d`. */
export function parseDuration(value: string): number | undefined {
  if (value === '0') return 0;
  const match = DURATION.exec(value);
  if (!match) return undefined;
  const ms = Number(match[1]) * DURATION_MS[match[2]!]!;
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** `0` (no limit), bytes, or a whole number of `KiB`, `MiB`, `GiB` or `TiB`. */
export function parseSize(value: string): number | undefined {
  const match = SIZE.exec(value);
  if (!match) return undefined;
  const bytes = Number(match[1]) * SIZE_BYTES[match[2] ?? 'B']!;
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** A stream's age limit: at least a second (JetStream's own floor is 100 ms), or 0. */
const durationVar = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      const ms = parseDuration(value.trim());
      if (ms === undefined || (ms > 0 && ms < 1_000)) {
        ctx.addIssue({
          code: 'custom',
          message: 'must be 0 (no limit) or a duration of at least 1s: 90s, 36h, 14d',
        });
        return z.NEVER;
      }
      return ms;
    });

/** A stream's size limit: at least 1 MiB (one journal message), or 0. */
const sizeVar = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      const bytes = parseSize(value.trim());
      if (bytes === undefined || (bytes > 0 && bytes < SIZE_BYTES.MiB!)) {
        ctx.addIssue({
          code: 'custom',
          message: 'must be 0 (no limit) or a size of at least 1MiB: 512MiB, 64GiB',
        });
        return z.NEVER;
      }
      return bytes;
    });

const storageVar = () => z.enum(['file', 'memory']).default('file');
const replicasVar = () => z.coerce.number().int().min(1).max(REPLICAS_MAX).default(1);

/** Every service that creates a stream reads the replica count. */
const replicasEnv = { TETHER_JETSTREAM_REPLICAS: replicasVar() };

/** The session journal's stream (router and history create it). */
export const sessionsStreamEnv = {
  ...replicasEnv,
  TETHER_SESSIONS_STREAM_MAX_AGE: durationVar(SESSIONS_STREAM_MAX_AGE_DEFAULT),
  TETHER_SESSIONS_STREAM_MAX_BYTES: sizeVar(STREAM_MAX_BYTES_DEFAULT),
  TETHER_SESSIONS_STREAM_STORAGE: storageVar(),
};

/** The audit stream (api and history create it). */
export const auditStreamEnv = {
  ...replicasEnv,
  TETHER_AUDIT_STREAM_MAX_AGE: durationVar(AUDIT_STREAM_MAX_AGE_DEFAULT),
  TETHER_AUDIT_STREAM_MAX_BYTES: sizeVar(STREAM_MAX_BYTES_DEFAULT),
  TETHER_AUDIT_STREAM_STORAGE: storageVar(),
};

export interface SessionsStreamEnv {
  TETHER_JETSTREAM_REPLICAS: number;
  TETHER_SESSIONS_STREAM_MAX_AGE: number;
  TETHER_SESSIONS_STREAM_MAX_BYTES: number;
  TETHER_SESSIONS_STREAM_STORAGE: 'file' | 'memory';
}

export interface AuditStreamEnv {
  TETHER_JETSTREAM_REPLICAS: number;
  TETHER_AUDIT_STREAM_MAX_AGE: number;
  TETHER_AUDIT_STREAM_MAX_BYTES: number;
  TETHER_AUDIT_STREAM_STORAGE: 'file' | 'memory';
}

export function sessionsStreamSettings(env: SessionsStreamEnv): StreamSettings {
  return {
    replicas: env.TETHER_JETSTREAM_REPLICAS,
    maxAgeMs: env.TETHER_SESSIONS_STREAM_MAX_AGE,
    maxBytes: env.TETHER_SESSIONS_STREAM_MAX_BYTES,
    storage: env.TETHER_SESSIONS_STREAM_STORAGE,
  };
}

export function auditStreamSettings(env: AuditStreamEnv): StreamSettings {
  return {
    replicas: env.TETHER_JETSTREAM_REPLICAS,
    maxAgeMs: env.TETHER_AUDIT_STREAM_MAX_AGE,
    maxBytes: env.TETHER_AUDIT_STREAM_MAX_BYTES,
    storage: env.TETHER_AUDIT_STREAM_STORAGE,
  };
}

/** The settings of an unset environment, for a configuration built by hand (in-process tests). */
export const AUDIT_STREAM_DEFAULTS: StreamSettings = auditStreamSettings(z.object(auditStreamEnv).parse({}));
