/// <reference lib="dom" />
// The console in a real browser on the real stack (issue 17 "Done when"): Debian's Chromium,
// the four services and the scripted edge, the development sign-in. One stack, one browser, the
// steps in order as a person would take them; every page is photographed and checked with axe.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { ApiClient, signToken, DEV_JWT_SECRET } from '#test-support';
import type { Stack } from '../../scripts/stack/launcher.js';
import type { E2eStack } from '../support/e2e-stack.js';
import { checkPage, eventually, launchBrowser, screenshot, startStack } from './browser.js';
import { startPrefixProxy } from './proxy.js';
import { SLOW_END, SLOW_TEXT, writeScript } from './scripted-agent.js';

jest.setTimeout(180_000);

/** Inside the task's loopback range (14700-14799). */
const PROXY_PORT = 14_710;
const UI_TIMEOUT_MS = 30_000;

const owner = `web${Date.now() % 100000}`;
const projectDir = mkdtempSync(join(tmpdir(), 'tether-browser-project-'));
let e2e: E2eStack;
let stack: Stack;
let browser: Browser;
let page: Page;
let api: ApiClient;
let sessionUrl = '';
/** What the page reported (errors only): printed when a step fails. */
const pageLog: string[] = [];
const scope = { edgeId: '', accessId: '', sessionId: '' };

beforeAll(async () => {
  e2e = await startStack({
    label: 'browser',
    // The api's development secret: only with it does the console offer the development sign-in.
    jwtSecret: DEV_JWT_SECRET,
    owner,
    prepareEdge: (edgeDir) => writeScript(edgeDir, projectDir),
  });
  stack = e2e.stack;
  scope.edgeId = stack.edge!.id;
  api = new ApiClient(stack.apiUrl, await signToken(DEV_JWT_SECRET, owner));
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(UI_TIMEOUT_MS);
  page.on('pageerror', (error) => pageLog.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') pageLog.push(`console: ${message.text()}`);
  });
});

/** Steps that failed, by name: their services' output is printed once the suite ends. */
const failed: string[] = [];

/**
 * One step of the walk-through. A Playwright wait that times out throws without any failed
 * `expect`, so failure is noted here, with a photograph of the page as it stood.
 */
function step(name: string, run: () => Promise<void>): void {
  it(name, async () => {
    try {
      await run();
    } catch (error) {
      failed.push(name);
      await screenshot(page, `failed-${failed.length}`).catch(() => undefined);
      throw error;
    }
  });
}

afterAll(async () => {
  if (failed.length > 0) {
    console.log(`Failed steps: ${failed.join('; ')}\n${pageLog.join('\n')}`);
    console.log(stack?.output().split('\n').slice(-200).join('\n'));
  }
  await browser?.close();
  await e2e?.close();
  rmSync(projectDir, { recursive: true, force: true });
});

async function devSignIn(as: string, url = `${stack.apiUrl}/`): Promise<void> {
  await page.goto(url);
  await page.getByLabel('User').fill(as);
  await page.getByRole('button', { name: 'Sign in for development' }).click();
  await page.getByText(`Signed in as`).waitFor();
}

async function send(text: string): Promise<void> {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** Waits until the live state says the agent is idle again. */
async function turnOver(): Promise<void> {
  await page.locator('.agent-state', { hasText: 'Idle' }).waitFor();
}

step('serves the page with a strict CSP, hashed immutable assets and no other origin', async () => {
  const response = await fetch(`${stack.apiUrl}/`);
  expect(response.status).toBe(200);
  expect(response.headers.get('cache-control')).toBe('no-cache');
  const csp = response.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self'");
  const html = await response.text();
  expect(html).not.toMatch(/https?:\/\//);
  const asset = /src="\.\/assets\/([^"]+\.js)"/.exec(html)?.[1];
  expect(asset).toBeDefined();
  const script = await fetch(`${stack.apiUrl}/assets/${asset}`);
  expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  expect((await fetch(`${stack.apiUrl}/assets/nope.js`)).status).toBe(404);
});

step('signs in for development and shows the connectors with their online state', async () => {
  const external: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(stack.apiUrl)) external.push(request.url());
  });
  await devSignIn(owner);
  await page.getByRole('cell', { name: 'demo-edge' }).waitFor();
  await page.getByText('Online').first().waitFor();
  await checkPage(page, '01-connectors');
  // Enrolling shows the credentials once.
  await page.getByLabel('Name', { exact: true }).fill('laptop');
  await page.getByRole('button', { name: 'Enroll' }).click();
  await page.getByText('Shown once.').waitFor();
  expect(await page.locator('pre').innerText()).toMatch(/TETHER_EDGE_TOKEN=\S+/);
  await checkPage(page, '02-connector-enrolled');
  await page.getByRole('button', { name: 'I have copied it' }).click();
  expect(external).toEqual([]);
});

step('creates a saved access with the discover and folder pickers', async () => {
  await page.getByRole('link', { name: 'Saved accesses' }).click();
  await page.getByRole('button', { name: 'New saved access' }).click();
  await page.getByLabel('Name', { exact: true }).fill('browser project');
  await page.getByLabel('Edge').selectOption(scope.edgeId);
  await page.getByRole('button', { name: 'Discover installations' }).click();
  const installation = page.getByLabel('Agent installation');
  await eventually(
    () => installation.locator('option').count(),
    (n) => n > 1,
  );
  await installation.selectOption({ index: 1 });
  await page.getByRole('button', { name: 'Browse folders' }).click();
  await page.getByRole('button', { name: 'Use this folder' }).waitFor();
  await checkPage(page, '03-access-form');
  await page.getByRole('button', { name: 'Use this folder' }).click();
  await page.getByLabel('Project folder').fill(projectDir);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('link', { name: 'browser project' }).waitFor();
  await checkPage(page, '04-accesses');
  const listed = await api.call<{ items: { id: string; name: string }[] }>('GET', '/api/v1/agent-accesses');
  scope.accessId = listed.body.data!.items.find((a) => a.name === 'browser project')!.id;
});

step('starts a session from the saved access and streams the scripted reply in', async () => {
  await page.getByRole('link', { name: 'browser project' }).click();
  await page.getByRole('cell', { name: 'No sessions yet.' }).waitFor();
  await checkPage(page, '04b-sessions');
  await page.getByRole('button', { name: 'New session' }).click();
  await page.getByRole('status').filter({ hasText: 'Live · caught up' }).waitFor();
  sessionUrl = page.url();
  scope.sessionId = /#\/s\/\d+\/[^/]+\/([^/]+)$/.exec(sessionUrl)![1]!;
  await send('hello');
  await page.getByText('Scripted reply to a prompt of 5 characters.').waitFor();
  await turnOver();
  await page.getByText(/dispatch \d+ ms · first reply \d+ ms · finished \d+ ms/).waitFor();
  await checkPage(page, '05-session');
});

step('approves a command and sees it run', async () => {
  await send('approve me');
  const card = page.getByRole('region', { name: 'The agent wants to run a command' });
  await card.getByText('echo scripted').waitFor();
  await checkPage(page, '06-approval');
  await card.getByRole('button', { name: 'Approve' }).click();
  await page.getByText('Command step over.').waitFor();
  await page.locator('.activity.completed', { hasText: 'echo scripted' }).waitFor();
  await turnOver();
});

step('declines a file change shown with its diff', async () => {
  await send('patch me');
  const card = page.getByRole('region', { name: 'The agent wants to change files' });
  await card.getByText('+written by the agent').waitFor();
  await checkPage(page, '07-file-change');
  await card.getByRole('button', { name: 'Decline' }).click();
  await page.getByText('Patch step over.').waitFor();
  await page.locator('.activity.declined').waitFor();
  await turnOver();
});

step('answers an input question', async () => {
  await send('ask me');
  const form = page.getByRole('form', { name: 'The agent asks' });
  await form.getByText('Choice: Which option?').waitFor();
  await checkPage(page, '08-question');
  await form.getByLabel('yes').check();
  await form.getByRole('button', { name: 'Answer' }).click();
  await page.getByText('You answered yes.').waitFor();
  await turnOver();
});

step(
  'finishes a turn after a reload mid-turn, resuming from its cursor with no gap or duplicate',
  async () => {
    // Layout shifts while the agent streams (CLS entries not caused by input).
    await page.evaluate(() => {
      const w = window as unknown as { shift: number };
      w.shift = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries() as unknown as { value: number; hadRecentInput: boolean }[]) {
          if (!entry.hadRecentInput) w.shift += entry.value;
        }
      }).observe({ type: 'layout-shift', buffered: false });
    });
    await send('slow one');
    await page.getByText(/slowly streamed words slowly/).waitFor();
    expect(await page.evaluate(() => (window as unknown as { shift: number }).shift)).toBeLessThan(0.05);
    const resumed = page.waitForRequest(
      (request) => request.url().includes('/events?') && Boolean(request.headers()['last-event-id']),
    );
    await page.reload();
    await resumed;
    await page.getByText(SLOW_END, { exact: false }).waitFor();
    await turnOver();
    const agentTexts = await page.locator('.msg.agent .text').allInnerTexts();
    expect(agentTexts.filter((text) => text.includes(SLOW_END))).toEqual([SLOW_TEXT]);
    expect(
      (await page.locator('.msg.user .text').allInnerTexts()).filter((t) => t === 'slow one'),
    ).toHaveLength(1);
  },
);

step('resumes the stream from its cursor after the api stops and starts again', async () => {
  await send('slow two');
  await page.locator('.msg.agent', { hasText: 'slowly' }).last().waitFor();
  await stack.kill('api');
  await page.getByRole('status').filter({ hasText: 'Reconnecting…' }).waitFor();
  await screenshot(page, '09-reconnecting');
  await stack.start('api');
  await stack.apiReady();
  await page.getByRole('status').filter({ hasText: 'Live · caught up' }).waitFor({ timeout: 60_000 });
  expect(await page.locator('.stream').getAttribute('data-resumed-from')).toMatch(/^.+:\d+$/);
  await page.locator('.msg.user', { hasText: 'slow two' }).waitFor();
  // Both slow turns end once each: `slow one` before the cut, `slow two` across it.
  await eventually(
    async () =>
      (await page.locator('.msg.agent .text').allInnerTexts()).filter((t) => t.endsWith(SLOW_END)).length,
    (n) => n === 2,
    60_000,
  );
  await turnOver();
});

step('uploads a file to the project and downloads it back', async () => {
  const content = `uploaded at ${Date.now()}\n`;
  await page
    .getByLabel('Upload a file')
    .setInputFiles({ name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from(content) });
  await eventually(
    () => page.locator('.files').innerText(),
    (text) => text.includes('Uploaded hello.txt.'),
  );
  await page.getByRole('list', { name: 'Attached to the next message' }).getByText('hello.txt').waitFor();
  await page.getByRole('button', { name: '.liaison-attachments/' }).click();
  await page.getByRole('button', { name: `${scope.sessionId}/` }).click();
  const downloadButton = page.getByRole('button', { name: /^Download .*hello\.txt$/ });
  await downloadButton.waitFor();
  await checkPage(page, '10-files');
  const [download] = await Promise.all([page.waitForEvent('download'), downloadButton.click()]);
  expect(readFileSync((await download.path())!, 'utf8')).toBe(content);
});

step('pages back to an archived round beyond the 19 shown', async () => {
  const base = { edge_id: scope.edgeId, access_id: scope.accessId, session_id: scope.sessionId };
  // 22 more rounds through the api: each send after a finished round opens a new one.
  for (let round = 0; round < 22; round++) {
    await eventually(
      async () => (await api.agent<{ running?: boolean }>({ ...base, action: 'poll' })).running,
      (running) => running !== true,
    );
    expect(
      (await api.agent<{ status: string }>({ ...base, action: 'send', text: `filler ${round}` })).status,
    ).toBe('ok');
  }
  await page.reload();
  await page.getByRole('status').filter({ hasText: 'Live · caught up' }).waitFor();
  await page.locator('.msg.user', { hasText: 'filler 21' }).waitFor();
  await page.getByRole('button', { name: 'Show 20 older rounds' }).click();
  await page.getByRole('heading', { name: 'Round 1', exact: true }).waitFor();
  await page.locator('.msg.user', { hasText: 'hello' }).first().waitFor();
  await checkPage(page, '11-archived-round');
});

step('serves the console under a path prefix behind a reverse proxy', async () => {
  const proxy = await startPrefixProxy('/tether', stack.apiUrl, PROXY_PORT);
  try {
    const prefixed = await browser.newPage();
    const saved = page;
    page = prefixed;
    try {
      await devSignIn(owner, proxy.url);
      await page.getByRole('cell', { name: 'demo-edge' }).waitFor();
      await page.goto(`${proxy.url}${new URL(sessionUrl).hash}`);
      await page.getByRole('status').filter({ hasText: 'Live · caught up' }).waitFor();
      await page.locator('.msg.user', { hasText: 'filler 21' }).waitFor();
    } finally {
      page = saved;
      await prefixed.close();
    }
  } finally {
    await proxy.close();
  }
});

step("answers another user's session URL with the not-found page", async () => {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await devSignIn('mallory');
  await page.goto(sessionUrl);
  await page.getByRole('heading', { name: 'Not found' }).waitFor();
  await checkPage(page, '12-not-found');
  await page.getByRole('button', { name: 'Sign out' }).click();
});

step(
  'keeps the session readable from history when the edge goes offline, edge actions disabled',
  async () => {
    await devSignIn(owner);
    await stack.kill('edge');
    await page.goto(sessionUrl);
    await page
      .getByText(/is offline: this session is read-only/)
      .first()
      .waitFor({ timeout: 60_000 });
    await page.locator('.msg.user', { hasText: 'filler 21' }).waitFor();
    await eventually(
      () => page.getByRole('button', { name: 'Send' }).isDisabled(),
      (disabled) => disabled,
    );
    expect(await page.getByLabel('Message', { exact: true }).isDisabled()).toBe(true);
    await checkPage(page, '13-offline');
    // 200 % zoom: half the CSS width, still readable without sideways scrolling.
    await page.setViewportSize({ width: 640, height: 450 });
    await screenshot(page, '14-offline-zoom-200');
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(
      true,
    );
  },
);

step('keeps a 2,000-item session light: only the rows in view are in the page', async () => {
  await page.setViewportSize({ width: 1280, height: 900 });
  // 2,000 more items of one round, added to what the tab holds for this session (same cursor, so
  // the stream resumes at the head and keeps them): a long session without 1,000 turns.
  // Added before the page's own script runs (the page it replaces saves its view when it goes).
  await page.addInitScript(() => {
    const key = Object.keys(sessionStorage).find((name) => name.startsWith('tether.journal.'));
    if (!key) return;
    const stored = JSON.parse(sessionStorage.getItem(key)!) as { items: Record<string, unknown>[] };
    if (stored.items.some((item) => item['itemId'] === 'm:900:0')) return;
    for (let i = 0; i < 2000; i++) {
      stored.items.push({
        itemId: `m:900:${i}`,
        revision: 1,
        sequence: 1_000_000 + i,
        observedAt: Date.now(),
        body: { type: 'message', role: i % 2 ? 'assistant' : 'user', text: `long session line ${i}` },
      });
    }
    sessionStorage.setItem(key, JSON.stringify(stored));
  });
  await page.reload();
  await page.locator('.msg', { hasText: 'long session line 1999' }).waitFor();
  expect(await page.locator('.vrow').count()).toBeLessThan(80);
  await page.locator('.vlist').evaluate((list) => (list.scrollTop = 0));
  // At the top: the oldest shown round is rendered, the newest rows have left the page.
  await page
    .getByRole('heading', { name: /^Round \d+$/ })
    .first()
    .waitFor();
  expect(await page.locator('.msg', { hasText: 'long session line 1999' }).count()).toBe(0);
  expect(await page.locator('.vrow').count()).toBeLessThan(80);
  await screenshot(page, '15-long-session');
});
