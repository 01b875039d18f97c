import { randomBytes } from 'node:crypto';
import { Limits } from '#contracts';
import { InvalidRequestError } from './errors.js';

/** Connector ids are Postgres BIGSERIAL values, sent as decimal strings. */
const EDGE_ID_PATTERN = /^[1-9][0-9]{0,18}$/;
const POSTGRES_BIGINT_MAX = 9_223_372_036_854_775_807n;

/** The connector id as stored, or null when the string cannot name a connector. */
export function parseEdgeId(edgeId: string): bigint | null {
  if (typeof edgeId !== 'string' || !EDGE_ID_PATTERN.test(edgeId)) return null;
  const id = BigInt(edgeId);
  return id <= POSTGRES_BIGINT_MAX ? id : null;
}

/** A new access id: 16 random bytes as 32 lowercase hex characters (reference §2.2). */
export function newAccessId(): string {
  return randomBytes(Limits.OPAQUE_ID_LENGTH / 2).toString('hex');
}

/**
 * Every query is scoped by the actor, so an absent actor must never reach a repository (an
 * undefined filter would match every owner). The contract schema already requires it; this is
 * the last line before the database.
 */
export function requireActorId(actorId: unknown): string {
  if (typeof actorId !== 'string' || actorId === '' || actorId.length > Limits.ACTOR_ID_MAX_LENGTH) {
    throw new InvalidRequestError(`actor_id must be 1 to ${Limits.ACTOR_ID_MAX_LENGTH} characters.`);
  }
  return actorId;
}
