/// <reference lib="dom" />
// Browser tests drive Debian's Chromium (`apt-get install chromium`) through playwright-core: no
// browser download. Each page the tests visit is checked with axe-core and photographed into
// test-artifacts/console/ (gitignored), the artifacts CI keeps.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startE2eStack, type E2eStack, type E2eStackOptions } from '../support/e2e-stack.js';
import { pollUntil } from '#test-support';

const require = createRequire(import.meta.url);
export const ARTIFACTS_DIR = join(process.cwd(), 'test-artifacts', 'console');
const CHROMIUM = process.env['TETHER_CHROMIUM_PATH'] ?? '/usr/bin/chromium';
let axeSource: string | undefined;

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    // CI runs as root, where Chromium's own sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS_DIR, `${name}.png`), fullPage: true });
}

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown }[] }[];
}

/** axe-core on the page as it is: serious and critical violations, as `id: help (targets)`. */
export async function seriousViolations(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol, so the page's CSP (no inline script) does not apply.
  await page.evaluate(axeSource);
  const result = await page.evaluate(() =>
    (
      globalThis as unknown as { axe: { run: (ctx: unknown, options: unknown) => Promise<AxeResult> } }
    ).axe.run(document, { resultTypes: ['violations'] }),
  );
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')})`);
}

/** Screenshot and accessibility check of one page, as every test does for each page it shows. */
export async function checkPage(page: Page, name: string): Promise<void> {
  await screenshot(page, name);
  expect(await seriousViolations(page)).toEqual([]);
}

/** Asks `probe` until `accept` holds, or fails with the last value after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const last = await pollUntil(probe, accept, { timeoutMs });
  if (!accept(last)) throw new Error(`Still ${JSON.stringify(last)} after ${timeoutMs} ms.`);
  return last;
}

/**
 * The stack, started again once when a service dies during its cold start: on a loaded 2-core
 * box a first NATS request has been seen to time out there, which is not what these tests test.
 */
export async function startStack(options: E2eStackOptions): Promise<E2eStack> {
  try {
    return await startE2eStack(options);
  } catch (error) {
    console.warn(`The stack did not start, trying once more: ${(error as Error).message.split('\n')[0]}`);
    return startE2eStack(options);
  }
}
