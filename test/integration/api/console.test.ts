// The console's routes in the api (docs/console.md): the page and its assets with their cache and
// security headers, the public settings, and the development sign-in that exists only with the
// public development secret.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEVELOPMENT_JWT_SECRET } from '../../../apps/api/src/config.js';
import { call, startApi, type Harness } from '../../support/api.js';

const consoleDir = mkdtempSync(join(tmpdir(), 'tether-console-'));
mkdirSync(join(consoleDir, 'assets'));
writeFileSync(
  join(consoleDir, 'index.html'),
  '<!doctype html><script type="module" src="./assets/app-Ab12.js"></script>',
);
writeFileSync(join(consoleDir, 'assets', 'app-Ab12.js'), 'console.log(1);');
writeFileSync(join(consoleDir, 'assets', 'notes.txt'), 'not an asset type');

afterAll(() => rmSync(consoleDir, { recursive: true, force: true }));

describe('the console served by an api with its own secret', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await startApi(
      'apiconsole',
      undefined,
      {},
      {
        console: { assetsDir: consoleDir, traceUrlTemplate: 'http://jaeger.test/trace/{trace_id}' },
      },
    );
  });
  afterAll(async () => {
    await api.close();
  });

  it('serves the page no-cache with a strict Content-Security-Policy', async () => {
    const response = await fetch(`${api.baseUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(await response.text()).toContain('./assets/app-Ab12.js');
  });

  it('serves hashed assets immutable, and nothing else', async () => {
    const asset = await fetch(`${api.baseUrl}/assets/app-Ab12.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    for (const path of ['/assets/notes.txt', '/assets/missing.js', '/assets/..%2Findex.html']) {
      const response = await fetch(`${api.baseUrl}${path}`);
      expect([path, response.status, await response.text()]).toEqual([
        path,
        404,
        expect.stringContaining('not found'),
      ]);
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
    expect((await call(api, 'POST', '/assets/app-Ab12.js')).status).toBe(405);
  });

  it('tells the console its settings: no OIDC, no development sign-in, the trace template', async () => {
    const response = await call(api, 'GET', '/api/v1/console/config');
    expect(response.status).toBe(200);
    expect(response.body['data']).toEqual({
      oidc: null,
      dev_sign_in: false,
      trace_url_template: 'http://jaeger.test/trace/{trace_id}',
    });
  });

  it('mints no development token', async () => {
    const response = await call(api, 'POST', '/api/v1/console/dev-token', { body: { sub: 'alice' } });
    expect(response.status).toBe(404);
  });
});

describe('the console of a development api', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await startApi(
      'apiconsoledev',
      { kind: 'secret', secret: DEVELOPMENT_JWT_SECRET },
      {},
      {
        console: { assetsDir: join(consoleDir, 'missing') },
      },
    );
  });
  afterAll(async () => {
    await api.close();
  });

  it('answers 404 at / when the console is not built', async () => {
    expect((await call(api, 'GET', '/')).status).toBe(404);
  });

  it('offers the development sign-in and mints a token the api accepts', async () => {
    const settings = await call(api, 'GET', '/api/v1/console/config');
    expect(settings.body['data']).toMatchObject({ dev_sign_in: true });
    const minted = await call(api, 'POST', '/api/v1/console/dev-token', { body: { sub: 'alice' } });
    expect(minted.status).toBe(200);
    const { token, expires_in } = minted.body['data'] as { token: string; expires_in: number };
    expect(expires_in).toBeGreaterThan(0);
    const listed = await call(api, 'GET', '/api/v1/agent-accesses', { token });
    expect(listed.status).toBe(200);
  });

  it.each([
    ['no subject', {}],
    ['an empty subject', { sub: '' }],
    ['a subject too long', { sub: 'a'.repeat(33) }],
    ['a subject with a space', { sub: 'a b' }],
    ['an unknown field', { sub: 'alice', permissions: ['x'] }],
  ])('refuses %s with 400', async (_name, body) => {
    const response = await call(api, 'POST', '/api/v1/console/dev-token', { body });
    expect(response.status).toBe(400);
  });
});
