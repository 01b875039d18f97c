/// <reference lib="dom" />
// Sign-in through OpenID Connect (issue 17 "Done when"): a real provider on loopback, the api in
// JWKS mode pointed at it, the console doing authorization code + PKCE in Chromium, and the api
// accepting the token it got. No development sign-in is offered in this mode.
import { jest } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { freePort } from '#test-support';
import type { E2eStack } from '../support/e2e-stack.js';
import { checkPage, launchBrowser, startStack } from './browser.js';
import { startOidcProvider, type OidcProvider } from './oidc-provider.js';

jest.setTimeout(180_000);

/** Inside the task's loopback range (14700-14799). */
const PROVIDER_PORT = 14_720;
const CLIENT_ID = 'tether-console';
const owner = `oidc${Date.now() % 100000}`;
let provider: OidcProvider;
let e2e: E2eStack;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const apiPort = await freePort();
  const consoleUrl = `http://127.0.0.1:${apiPort}/`;
  provider = await startOidcProvider(PROVIDER_PORT, CLIENT_ID, consoleUrl);
  e2e = await startStack({
    label: 'browseroidc',
    owner,
    stack: {
      httpPort: apiPort,
      extraEnv: {
        // JWKS mode: the provider's keys, issuer and audience (its ID tokens are for this client).
        TETHER_JWT_SECRET: '',
        TETHER_JWT_JWKS_URL: provider.jwksUrl,
        TETHER_JWT_ISSUER: provider.issuer,
        TETHER_JWT_AUDIENCE: CLIENT_ID,
        TETHER_CONSOLE_OIDC_CLIENT_ID: CLIENT_ID,
        TETHER_CONSOLE_OIDC_SCOPES: 'openid permissions',
      },
    },
  });
  browser = await launchBrowser();
  page = await browser.newPage();
  page.setDefaultTimeout(30_000);
});

afterAll(async () => {
  await browser?.close();
  await e2e?.close();
  await provider?.close();
});

it('signs in with authorization code + PKCE and calls the api with the token', async () => {
  const authorize: string[] = [];
  page.on('request', (request) => {
    if (request.url().startsWith(`${provider.issuer}/auth`)) authorize.push(request.url());
  });
  await page.goto(`${e2e.stack.apiUrl}/#/connectors`);
  expect(await page.getByRole('button', { name: 'Sign in for development' }).count()).toBe(0);
  await checkPage(page, '00-sign-in');
  await page.getByRole('button', { name: 'Sign in with your identity provider' }).click();
  await page.locator('input[name="login"]').fill(owner);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByText('Signed in as').waitFor();
  await page.getByText(owner, { exact: true }).waitFor();
  const params = new URL(authorize[0]!).searchParams;
  expect(params.get('code_challenge_method')).toBe('S256');
  expect(params.get('client_id')).toBe(CLIENT_ID);
  // Back on the page it started from, with the code gone from the address bar.
  expect(page.url()).toBe(`${e2e.stack.apiUrl}/#/connectors`);
  // The api accepted the provider's token: the demo edge of this user is listed.
  await page.getByRole('cell', { name: 'demo-edge' }).waitFor();
  expect(await page.evaluate(() => document.cookie)).toBe('');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in with your identity provider' }).waitFor();
  expect(
    await page.evaluate(() => Object.keys(sessionStorage).filter((key) => key.startsWith('tether.'))),
  ).toEqual([]);
});
