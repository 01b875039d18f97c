import { createHmac, timingSafeEqual } from 'node:crypto';

// An edge proves who it is with a token derived from the deployment's edge secret and its id.
// History mints it at enrollment; the router checks it on every heartbeat and session update
// without a database round trip. Rotating TETHER_EDGE_SECRET revokes every token at once; the
// NATS account of each edge (see docs/deploy.md) is the first line of defence.

const CONTEXT = 'tether-edge-token-v1:';

export function edgeToken(secret: string, edgeId: string): string {
  return createHmac('sha256', secret)
    .update(CONTEXT + edgeId)
    .digest('base64url');
}

export function verifyEdgeToken(secret: string, edgeId: string, token: string): boolean {
  const expected = Buffer.from(edgeToken(secret, edgeId));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
