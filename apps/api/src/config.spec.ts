import { ConfigError, loadConfig } from '#config';
import { apiConfigSchema, USER_LIMITS_DEFAULTS } from './config.js';

describe('api config', () => {
  it('reads the defaults with an HS256 secret', () => {
    const config = loadConfig(apiConfigSchema, { TETHER_JWT_SECRET: 'a-development-secret' });
    expect(config).toEqual({
      nats: { servers: ['nats://127.0.0.1:4222'] },
      namespace: 'tether',
      logLevel: 'log',
      http: { host: '0.0.0.0', port: 8080 },
      jwt: {
        key: { kind: 'secret', secret: 'a-development-secret' },
        issuer: undefined,
        audience: undefined,
      },
      sse: { heartbeatMs: 15_000, reauthorizeMs: 60_000 },
      // The audit stream's settings when the operator sets none (libs/config jetstream.ts).
      auditStream: { replicas: 1, maxAgeMs: 30 * 24 * 60 * 60 * 1000, maxBytes: 0, storage: 'file' },
      authorizeCacheMs: 2_000,
      authorizeOutageMs: 5 * 60_000,
      limits: USER_LIMITS_DEFAULTS,
      metricsPort: 9464,
      shutdown: { graceMs: 20_000, delayMs: 0 },
      console: {},
    });
  });

  it('reads the console settings: OIDC client at the JWT issuer, scopes, trace links', () => {
    const config = loadConfig(apiConfigSchema, {
      TETHER_JWT_JWKS_URL: 'https://id.example.test/jwks',
      TETHER_JWT_ISSUER: 'https://id.example.test',
      TETHER_CONSOLE_OIDC_CLIENT_ID: 'tether-console',
      TETHER_CONSOLE_TRACE_URL: 'http://jaeger.example.test/trace/{trace_id}',
    });
    expect(config.console).toEqual({
      oidc: { issuer: 'https://id.example.test', clientId: 'tether-console', scopes: 'openid profile' },
      traceUrlTemplate: 'http://jaeger.example.test/trace/{trace_id}',
    });
  });

  it('reads the per-user limits and refuses a bound below 1', () => {
    const secret = { TETHER_JWT_SECRET: 'a-development-secret' };
    const config = loadConfig(apiConfigSchema, {
      ...secret,
      TETHER_USER_RATE_PER_S: '5',
      TETHER_USER_RATE_BURST: '10',
      TETHER_USER_SSE_STREAMS_MAX: '3',
    });
    expect(config.limits).toMatchObject({ userRate: { perSecond: 5, burst: 10 }, userStreams: 3 });
    expect(() => loadConfig(apiConfigSchema, { ...secret, TETHER_USER_WATCHES_MAX: '0' })).toThrow(
      /TETHER_USER_WATCHES_MAX/,
    );
    expect(() => loadConfig(apiConfigSchema, { ...secret, TETHER_EDGE_RATE_PER_S: 'fast' })).toThrow(
      /TETHER_EDGE_RATE_PER_S/,
    );
  });
});

describe('api config', () => {
  it('refuses a development, short or placeholder JWT secret in production, naming the variable', () => {
    const production = { NODE_ENV: 'production' };
    for (const secret of ['tether-dev-secret-change-me', 'a-development-secret', 'x'.repeat(40)]) {
      expect(() => loadConfig(apiConfigSchema, { ...production, TETHER_JWT_SECRET: secret })).toThrow(
        /TETHER_JWT_SECRET/,
      );
    }
    const strong = 'k7Qx2vN9pL4mR8sT1wY6zB3cF5hJ0dG2aE7uI9oP';
    expect(loadConfig(apiConfigSchema, { ...production, TETHER_JWT_SECRET: strong }).jwt.key).toEqual({
      kind: 'secret',
      secret: strong,
    });
    // A JWKS URL instead of a secret is fine in production: there is no secret to check.
    expect(
      loadConfig(apiConfigSchema, { ...production, TETHER_JWT_JWKS_URL: 'https://id.example/jwks' }).jwt.key,
    ).toEqual({ kind: 'jwks', url: 'https://id.example/jwks' });
  });

  it('turns the authorization cache off with 0 and refuses more than 2 s', () => {
    const secret = { TETHER_JWT_SECRET: 'a-development-secret' };
    expect(loadConfig(apiConfigSchema, { ...secret, TETHER_AUTHORIZE_CACHE_MS: '0' }).authorizeCacheMs).toBe(
      0,
    );
    expect(() => loadConfig(apiConfigSchema, { ...secret, TETHER_AUTHORIZE_CACHE_MS: '2001' })).toThrow(
      /TETHER_AUTHORIZE_CACHE_MS/,
    );
  });

  it('bounds how long a remembered grant stands in for an unreachable history', () => {
    const secret = { TETHER_JWT_SECRET: 'a-development-secret' };
    expect(
      loadConfig(apiConfigSchema, { ...secret, TETHER_AUTHORIZE_OUTAGE_MS: '0' }).authorizeOutageMs,
    ).toBe(0);
    expect(() => loadConfig(apiConfigSchema, { ...secret, TETHER_AUTHORIZE_OUTAGE_MS: '3600001' })).toThrow(
      /TETHER_AUTHORIZE_OUTAGE_MS/,
    );
  });

  it('reads shorter SSE timers (tests use them)', () => {
    const config = loadConfig(apiConfigSchema, {
      TETHER_JWT_SECRET: 'a-development-secret',
      TETHER_SSE_HEARTBEAT_MS: '250',
      TETHER_SSE_REAUTHORIZE_MS: '1000',
    });
    expect(config.sse).toEqual({ heartbeatMs: 250, reauthorizeMs: 1000 });
  });
});

describe('api config', () => {
  it('reads a JWKS with issuer and audience', () => {
    const config = loadConfig(apiConfigSchema, {
      TETHER_JWT_JWKS_URL: 'https://id.example.test/.well-known/jwks.json',
      TETHER_JWT_ISSUER: 'https://id.example.test',
      TETHER_JWT_AUDIENCE: 'tether',
      TETHER_JWT_SECRET: '',
    });
    expect(config.jwt).toEqual({
      key: { kind: 'jwks', url: 'https://id.example.test/.well-known/jwks.json' },
      issuer: 'https://id.example.test',
      audience: 'tether',
    });
  });

  it.each([
    ['neither key source', {}],
    [
      'both key sources',
      { TETHER_JWT_SECRET: 'a-development-secret', TETHER_JWT_JWKS_URL: 'https://id.example.test/jwks' },
    ],
    ['a short secret', { TETHER_JWT_SECRET: 'short' }],
    ['a JWKS URL that is not http(s)', { TETHER_JWT_JWKS_URL: 'file:///etc/jwks.json' }],
    ['a bad port', { TETHER_JWT_SECRET: 'a-development-secret', TETHER_HTTP_PORT: '70000' }],
    ['a bad namespace', { TETHER_JWT_SECRET: 'a-development-secret', TETHER_NAMESPACE: 'Bad.Name' }],
    ['a zero heartbeat', { TETHER_JWT_SECRET: 'a-development-secret', TETHER_SSE_HEARTBEAT_MS: '0' }],
    [
      'an OIDC client without a JWKS and issuer',
      { TETHER_JWT_SECRET: 'a-development-secret', TETHER_CONSOLE_OIDC_CLIENT_ID: 'tether-console' },
    ],
    [
      'OIDC scopes with a quote',
      {
        TETHER_JWT_JWKS_URL: 'https://id.example.test/jwks',
        TETHER_JWT_ISSUER: 'https://id.example.test',
        TETHER_CONSOLE_OIDC_CLIENT_ID: 'tether-console',
        TETHER_CONSOLE_OIDC_SCOPES: 'openid "x"',
      },
    ],
    [
      'a trace URL without {trace_id}',
      { TETHER_JWT_SECRET: 'a-development-secret', TETHER_CONSOLE_TRACE_URL: 'http://jaeger/trace/' },
    ],
    [
      'a re-check that is not a number',
      { TETHER_JWT_SECRET: 'a-development-secret', TETHER_SSE_REAUTHORIZE_MS: 'x' },
    ],
  ])('refuses %s with a message naming the variable', (_name, env) => {
    expect(() => loadConfig(apiConfigSchema, env)).toThrow(ConfigError);
    expect(() => loadConfig(apiConfigSchema, env)).toThrow(/TETHER_/);
  });
});
