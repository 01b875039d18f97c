import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import {
  ALICE,
  ALL_PERMISSIONS,
  EDGE,
  SESSION,
  call,
  startApi,
  token,
  type Harness,
  expectError,
} from '../../support/api.js';

const ISSUER = 'https://id.example.test';
const AUDIENCE = 'tether-api';
const KEY_ID = 'test-key-1';

describe('api with a remote JWKS', () => {
  let jwks: Server;
  let jwksRequests = 0;
  let privateKey: CryptoKey;
  let otherKey: CryptoKey;
  let api: Harness;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    otherKey = (await generateKeyPair('ES256')).privateKey;
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: KEY_ID, alg: 'ES256', use: 'sig' };
    jwks = createServer((_request, response) => {
      jwksRequests += 1;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys: [publicJwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const { port } = jwks.address() as AddressInfo;
    api = await startApi(
      'apijwks',
      { kind: 'jwks', url: `http://127.0.0.1:${port}/.well-known/jwks.json` },
      { issuer: ISSUER, audience: AUDIENCE },
    );
  });
  afterAll(async () => {
    await api?.close();
    await new Promise<void>((resolve) => jwks.close(() => resolve()));
  });

  function signed(
    key: CryptoKey,
    claims: { sub?: string; iss?: string; aud?: string; kid?: string } = {},
  ): Promise<string> {
    const jwt = new SignJWT({ permissions: ALL_PERMISSIONS })
      .setProtectedHeader({ alg: 'ES256', kid: claims.kid ?? KEY_ID })
      .setSubject(claims.sub ?? ALICE)
      .setIssuer(claims.iss ?? ISSUER)
      .setAudience(claims.aud ?? AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('5m');
    return jwt.sign(key);
  }

  const poll = { edge_id: EDGE, action: 'poll', session_id: SESSION };

  it('accepts a token signed by a key of the set', async () => {
    const response = await call(api, 'POST', '/api/v1/edge-agents', {
      token: await signed(privateKey),
      body: poll,
    });
    expect(response.status).toBe(200);
    expect(jwksRequests).toBeGreaterThan(0);
    expect(api.standIns.received('routerEdgeAgent')[0]).toMatchObject({ actor_id: ALICE });
  });

  it.each<[string, () => Promise<string>]>([
    ['signed by a key outside the set', () => signed(otherKey)],
    ['naming an unknown key id', () => signed(otherKey, { kid: 'unknown' })],
    ['from another issuer', () => signed(privateKey, { iss: 'https://evil.example.test' })],
    ['for another audience', () => signed(privateKey, { aud: 'someone-else' })],
    ['signed HS256 with a shared secret', () => token(ALICE)],
  ])('refuses a token %s', async (_name, make) => {
    const response = await call(api, 'POST', '/api/v1/edge-agents', { token: await make(), body: poll });
    expectError(response, 401, 'unauthorized');
  });
});

describe('api whose JWKS cannot be fetched', () => {
  let api: Harness;

  beforeAll(async () => {
    // A port that was just free: nothing listens on it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    api = await startApi('apijwksdown', { kind: 'jwks', url: `http://127.0.0.1:${port}/jwks.json` });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('answers 503 rather than blaming the caller', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const jwt = await new SignJWT({ permissions: ALL_PERMISSIONS })
      .setProtectedHeader({ alg: 'ES256', kid: KEY_ID })
      .setSubject(ALICE)
      .setExpirationTime('5m')
      .sign(privateKey);
    const response = await call(api, 'GET', '/api/v1/agent-accesses', { token: jwt });
    expectError(response, 503, 'agent unavailable');
    expect(api.standIns.received('historyAccessList')).toHaveLength(0);
  });
});
