// One NATS user per edge, minted at enrollment and at every rotation by the holder of the
// account signing key (the history service).
import { createUser, type KeyPair } from '@nats-io/nkeys';
import { edgePermissions, type Subjects } from '#contracts';
import { credsFile, userJwt } from './claims.js';

export interface EdgeUser {
  /** The user's public key (U…): what a revocation names. */
  publicKey: string;
  /** The `.creds` file the edge connects with. */
  creds: string;
}

export async function mintEdgeUser(
  subjects: Subjects,
  edgeId: string,
  account: string,
  signer: KeyPair,
): Promise<EdgeUser> {
  const user = createUser();
  const jwt = await userJwt({
    name: `edge-${edgeId}`,
    user: user.getPublicKey(),
    account,
    signer,
    permissions: edgePermissions(subjects, edgeId),
  });
  return { publicKey: user.getPublicKey(), creds: credsFile(jwt, user) };
}
