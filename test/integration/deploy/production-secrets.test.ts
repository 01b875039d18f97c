// Safe defaults (issue 12): a service started with NODE_ENV=production (what the images set) and a
// development, missing, empty or short secret exits non-zero and names the variable to set. Each
// case starts the real built process; nothing is listening where its NATS URL points, so a
// process that got past its configuration would hang instead of exiting.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { edgeToken } from '#contracts';
import { DEV_EDGE_SECRET, DEV_JWT_SECRET } from '#test-support';

const DIST = resolve(process.cwd(), 'dist/apps');
/** A cold start of a service on a loaded 2-core box: module loading alone can take seconds. */
const EXIT_TIMEOUT_MS = 60_000;
const STRONG = 'k7Qx2vN9pL4mR8sT1wY6zB3cF5hJ0dG2aE7uI9oP';
/** The journal key router and history need besides the secret a case is about. */
const JOURNAL = { TETHER_JOURNAL_KEY: 'Vb8nQ3xK7mP2wR9tY4zC6fH1jL5dG0sA3eU8iO2q' };
const EDGE_ID = '4242';

jest.setTimeout(5 * EXIT_TIMEOUT_MS);

interface Exit {
  code: number | null;
  output: string;
}

function start(entry: string, env: Record<string, string>): Promise<Exit> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [resolve(DIST, entry)], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        // Nothing listens here: only a configuration error can end the process quickly.
        TETHER_NATS_URL: 'nats://127.0.0.1:14401',
        TETHER_METRICS_PORT: 'off',
        OTEL_SDK_DISABLED: 'true',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${entry} did not exit; it accepted its configuration.\n${output}`));
    }, EXIT_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

const API = 'api/src/main.js';
const ROUTER = 'session-router/src/main.js';
const HISTORY = 'history/src/main.js';
const EDGE = 'edge-connector/src/main.js';

const cases: [string, string, string, Record<string, string>][] = [
  // [service, the variable the refusal must name, entry, environment]
  ['api', 'TETHER_JWT_SECRET', API, { TETHER_JWT_SECRET: DEV_JWT_SECRET }],
  ['api', 'TETHER_JWT_SECRET', API, { TETHER_JWT_SECRET: '' }],
  ['api', 'TETHER_JWT_SECRET', API, { TETHER_JWT_SECRET: 'sixteen-chars-ok' }],
  ['session-router', 'TETHER_EDGE_SECRET', ROUTER, { ...JOURNAL, TETHER_EDGE_SECRET: DEV_EDGE_SECRET }],
  ['session-router', 'TETHER_EDGE_SECRET', ROUTER, { ...JOURNAL }],
  [
    'session-router',
    'TETHER_JOURNAL_KEY',
    ROUTER,
    { TETHER_EDGE_SECRET: STRONG, TETHER_JOURNAL_KEY: 'tether-dev-journal-key-change-me-0123456789' },
  ],
  [
    'history',
    'TETHER_HISTORY_KEY',
    HISTORY,
    {
      ...JOURNAL,
      TETHER_EDGE_SECRET: STRONG,
      TETHER_HISTORY_KEY: 'tether-dev-history-key-change-me-0123456789',
    },
  ],
  [
    'history',
    'TETHER_EDGE_SECRET',
    HISTORY,
    { ...JOURNAL, TETHER_EDGE_SECRET: 'short-but-16-chars', TETHER_HISTORY_KEY: STRONG },
  ],
  [
    'edge-connector',
    'TETHER_EDGE_TOKEN',
    EDGE,
    { TETHER_EDGE_ID: EDGE_ID, TETHER_EDGE_TOKEN: edgeToken(DEV_EDGE_SECRET, EDGE_ID) },
  ],
  ['edge-connector', 'TETHER_EDGE_TOKEN', EDGE, { TETHER_EDGE_ID: EDGE_ID }],
];

test.each(cases)(
  '%s refuses to start in production naming %s (case %#)',
  async (_name, variable, entry, env) => {
    const exit = await start(entry, env);
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(exit.output).toContain(variable);
    // The refusal says what is wrong without echoing the secret it refused.
    for (const value of Object.values(env)) if (value.length >= 16) expect(exit.output).not.toContain(value);
  },
);
