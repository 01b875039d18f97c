/// <reference lib="dom" />
// The console with the Codex demo edge (issue 17): the real `codex app-server` behind the edge,
// the project's fake Responses-API provider behind Codex. A session started from the console,
// a command Codex wants approved, approved in the browser, and the reply after it.
import { existsSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { jest } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import type { E2eStack } from '../support/e2e-stack.js';
import { checkPage, launchBrowser, startStack } from './browser.js';
import { DEV_JWT_SECRET } from '#test-support';

jest.setTimeout(180_000);

const owner = `codexweb${Date.now() % 100000}`;
let e2e: E2eStack;
let browser: Browser;
let page: Page;

/** The native Codex binary starts faster than the npm entry point (as in test/e2e/codex.test.ts). */
function nativeCodex(): Record<string, string> {
  const binary = resolve(
    import.meta.dirname,
    '../../node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex',
  );
  return process.platform === 'linux' && process.arch === 'x64' && existsSync(binary)
    ? { TETHER_CODEX_PATH: binary }
    : {};
}

beforeAll(async () => {
  e2e = await startStack({
    label: 'browsercodex',
    // The development secret: the console offers its development sign-in.
    jwtSecret: DEV_JWT_SECRET,
    owner,
    stack: { agent: 'codex', codexFakeProvider: true, edgeEnv: nativeCodex() },
  });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(45_000);
});

afterAll(async () => {
  await browser?.close();
  await e2e?.close();
});

it('runs a Codex turn from the console: approve its command, read its reply', async () => {
  const { stack, owner: api } = e2e;
  const edgeId = stack.edge!.id;
  const projectDir = realpathSync(e2e.projectDir);
  const discovered = await api.agent<{ installations?: { id: string; kind: string }[] }>({
    edge_id: edgeId,
    action: 'discover',
  });
  const installation = discovered.installations!.find((candidate) => candidate.kind === 'codex')!;
  const created = await api.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: 'codex project',
    kind: 'codex',
    edge_id: edgeId,
    installation_id: installation.id,
    project: projectDir,
  });
  expect(created.status).toBe(200);

  await page.goto(`${stack.apiUrl}/#/sessions/${created.body.data!.id}`);
  await page.getByLabel('User').fill(owner);
  await page.getByRole('button', { name: 'Sign in for development' }).click();
  await page.getByRole('button', { name: 'New session' }).click();
  await page.getByRole('status').filter({ hasText: 'Live · caught up' }).waitFor();

  const target = join(projectDir, 'from-console.txt');
  stack.fakeProvider!.script(
    { kind: 'shell', command: `echo written from the console > ${target}`, escalate: true },
    { kind: 'text', text: 'The file is written.' },
  );
  await page.getByLabel('Message', { exact: true }).fill('write the file');
  await page.getByRole('button', { name: 'Send' }).click();
  const card = page.getByRole('region', { name: 'The agent wants to run a command' });
  await card.getByText('echo written from the console').waitFor();
  await checkPage(page, '20-codex-approval');
  await card.getByRole('button', { name: 'Approve' }).click();
  await page.locator('.msg.agent', { hasText: 'The file is written.' }).waitFor();
  expect(existsSync(target)).toBe(true);
});
