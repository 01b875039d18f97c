// Pushing an account JWT to the servers' resolver: a request on the system account, answered by
// every server that holds the account. Used by history when it revokes or rotates an edge.
import type { NatsConnection } from '@nats-io/transport-node';

/** The resolver update subject of nats-server ≥ 2.2 (full and memory resolvers). */
export const CLAIMS_UPDATE_SUBJECT = '$SYS.REQ.CLAIMS.UPDATE';
/** A server answers an update within a round trip; this bounds a server that is down. */
export const CLAIMS_UPDATE_TIMEOUT_MS = 5_000;

/** The resolver refused the JWT (not signed by the operator, older than the stored one...). */
export class ClaimsUpdateError extends Error {
  constructor(detail: string) {
    super(`The NATS resolver refused the account JWT: ${detail}`);
    this.name = 'ClaimsUpdateError';
  }
}

interface ClaimsUpdateReply {
  data?: { code?: number; message?: string };
  error?: { code?: number; description?: string };
}

/**
 * Sends the account JWT and waits for the first server's answer. In a cluster the servers pass
 * the update on among themselves; the reply says the update was stored.
 */
export async function pushAccountJwt(system: NatsConnection, jwt: string): Promise<void> {
  const reply = await system.request(CLAIMS_UPDATE_SUBJECT, new TextEncoder().encode(jwt), {
    timeout: CLAIMS_UPDATE_TIMEOUT_MS,
  });
  let parsed: ClaimsUpdateReply;
  try {
    parsed = JSON.parse(new TextDecoder().decode(reply.data)) as ClaimsUpdateReply;
  } catch {
    throw new ClaimsUpdateError('unreadable reply');
  }
  if (parsed.error) throw new ClaimsUpdateError(parsed.error.description ?? `code ${parsed.error.code}`);
}
