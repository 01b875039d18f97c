// A real OpenID provider on loopback (the `oidc-provider` package) for the console's sign-in test:
// authorization code + PKCE for one public client, its development login and consent pages, RS256
// ID tokens that carry the api's `permissions` claim.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import Provider from 'oidc-provider';
import { ALL_PERMISSIONS } from '#test-support';

export interface OidcProvider {
  issuer: string;
  jwksUrl: string;
  close(): Promise<void>;
}

export async function startOidcProvider(
  port: number,
  clientId: string,
  redirectUri: string,
): Promise<OidcProvider> {
  const issuer = `http://127.0.0.1:${port}`;
  const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        token_endpoint_auth_method: 'none',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    pkce: { required: () => true },
    scopes: ['openid', 'permissions'],
    claims: { openid: ['sub'], permissions: ['permissions'] },
    // The api reads `permissions` from the token it is given: put the scope's claims in the ID token.
    conformIdTokenClaims: false,
    findAccount: (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: () => ({ sub, permissions: ALL_PERMISSIONS }),
    }),
    jwks: { keys: [{ ...key, kid: 'test-key', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    features: { devInteractions: { enabled: true } },
  });
  const server: Server = await new Promise((resolve) => {
    const listening = provider.listen(port, '127.0.0.1', () => resolve(listening));
  });
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
