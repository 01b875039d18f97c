import { createHmac, timingSafeEqual } from 'node:crypto';

// An edge proves who it is with a token derived from the deployment's edge secret, its id and
// its credential generation. History mints it at enrollment and again at every rotation (the
// generation goes up by one); the router checks it on every heartbeat and session update and
// asks history which generation is current (cached, dropped on history's notice), so rotating
// or deleting one connector revokes that edge's token alone. Rotating TETHER_EDGE_SECRET still
// revokes every token at once. On a NATS with decentralised auth each edge also has its own NATS
// user, revoked with the token (docs/security.md).

const CONTEXT = 'tether-edge-token-v1:';

function mac(secret: string, edgeId: string, generation: number): string {
  // Generation 0 keeps the first format, so tokens minted before generations keep working.
  const subject = generation === 0 ? edgeId : `${edgeId}:${generation}`;
  return createHmac('sha256', secret)
    .update(CONTEXT + subject)
    .digest('base64url');
}

/** `<mac>` for generation 0, `<generation>.<mac>` after a rotation. */
export function edgeToken(secret: string, edgeId: string, generation = 0): string {
  const value = mac(secret, edgeId, generation);
  return generation === 0 ? value : `${generation}.${value}`;
}

/** The generation a token claims (0 for the first format), or null when it is malformed. */
export function tokenGeneration(token: string): number | null {
  const dot = token.indexOf('.');
  if (dot < 0) return 0;
  const digits = token.slice(0, dot);
  if (!/^[1-9][0-9]{0,8}$/.test(digits)) return null;
  return Number(digits);
}

/** True when `token` is this edge's token of exactly `generation`. */
export function verifyEdgeToken(secret: string, edgeId: string, token: string, generation = 0): boolean {
  if (tokenGeneration(token) !== generation) return false;
  const expected = Buffer.from(edgeToken(secret, edgeId, generation));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
