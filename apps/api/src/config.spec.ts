import { ConfigError, loadConfig } from '#config';
import { apiConfigSchema } from './config.js';

describe('api config', () => {
  it('reads the defaults with an HS256 secret', () => {
    const config = loadConfig(apiConfigSchema, { TETHER_JWT_SECRET: 'a-development-secret' });
    expect(config).toEqual({
      natsUrl: 'nats://127.0.0.1:4222',
      namespace: 'tether',
      logLevel: 'log',
      http: { host: '0.0.0.0', port: 8080 },
      jwt: {
        key: { kind: 'secret', secret: 'a-development-secret' },
        issuer: undefined,
        audience: undefined,
      },
    });
  });

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
  ])('refuses %s with a message naming the variable', (_name, env) => {
    expect(() => loadConfig(apiConfigSchema, env)).toThrow(ConfigError);
    expect(() => loadConfig(apiConfigSchema, env)).toThrow(/TETHER_/);
  });
});
