// `npm run stack [-- --agent codex|claude|gemini]`: the four services and one demo edge, against the NATS,
// Redis and Postgres named in the environment (default: the local ports), until Ctrl-C.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import { DEV_HISTORY_KEY, DEV_JOURNAL_KEY, natsOptionsFromEnv, Stack } from './launcher.js';

const run = promisify(execFile);
const DEV_JWT_SECRET = 'tether-dev-secret-change-me';
const DEV_EDGE_SECRET = 'tether-dev-edge-secret-change-me';

const { values } = parseArgs({
  options: { agent: { type: 'string', default: 'scripted' } },
  allowPositionals: false,
});
const AGENTS = ['scripted', 'codex', 'claude', 'gemini'] as const;
const isAgent = (value: string): value is (typeof AGENTS)[number] =>
  (AGENTS as readonly string[]).includes(value);
if (!isAgent(values.agent)) {
  console.error(`--agent must be scripted, codex, claude or gemini, not ${values.agent}`);
  process.exit(2);
}
const agent = values.agent;

const env = process.env;
const databaseUrl = env.TETHER_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/tether';

/** Creates the database when it does not exist yet, then applies every migration. */
async function prepareDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
  await run(process.execPath, ['scripts/migrate.mjs', 'deploy'], {
    env: { ...env, DATABASE_URL: url },
  });
}

const edgeDataDir = env.TETHER_EDGE_DATA_DIR ?? join(homedir(), '.tether', 'demo-edge');
mkdirSync(edgeDataDir, { recursive: true, mode: 0o700 });
if (!env.TETHER_JWT_SECRET) console.warn('TETHER_JWT_SECRET is not set: using the development secret.');
// The edge refuses to run agents as root (they would act with root's rights). A developer who runs
// the demo stack as root (a container, a CI box) opts out explicitly, and is told so.
const asRoot = process.getuid?.() === 0;
const allowRoot = env.TETHER_EDGE_ALLOW_ROOT ?? (asRoot ? '1' : undefined);
if (asRoot && allowRoot === '1') {
  console.warn('Running as root: the demo edge is started with TETHER_EDGE_ALLOW_ROOT=1.');
}

// With --agent codex the edge drives the real Codex CLI. TETHER_CODEX_FAKE_PROVIDER=1 puts the
// project's scripted provider behind it (offline); otherwise Codex uses its own sign-in or the
// OpenAI key forwarded here (README "The Codex demo edge").
const fakeProvider = values.agent === 'codex' && env.TETHER_CODEX_FAKE_PROVIDER === '1';
const forwarded = (name: string): boolean =>
  name === 'TETHER_CODEX_PATH' ||
  (!fakeProvider &&
    (name === 'TETHER_CODEX_HOME' ||
      name === 'TETHER_CODEX_ENV_ALLOW' ||
      name === 'CODEX_API_KEY' ||
      name.startsWith('OPENAI_')));
const codexEnv: Record<string, string> =
  values.agent === 'codex'
    ? Object.fromEntries(
        Object.entries(env).filter(
          (entry): entry is [string, string] => forwarded(entry[0]) && entry[1] !== undefined,
        ),
      )
    : {};

// With --agent claude the edge drives the real Claude Code CLI. TETHER_CLAUDE_FAKE_PROVIDER=1 puts
// the project's scripted Messages API behind it (offline); otherwise Claude Code uses the key or
// sign-in forwarded here (README "The Claude Code demo edge").
const claudeFake = agent === 'claude' && env.TETHER_CLAUDE_FAKE_PROVIDER === '1';
const claudeForwarded = (name: string): boolean =>
  name === 'TETHER_CLAUDE_PATH' ||
  (!claudeFake &&
    (name === 'TETHER_CLAUDE_CONFIG_DIR' ||
      name === 'TETHER_CLAUDE_ENV_ALLOW' ||
      name === 'CLAUDE_CODE_OAUTH_TOKEN' ||
      name.startsWith('ANTHROPIC_')));
const claudeEnv: Record<string, string> =
  agent === 'claude'
    ? Object.fromEntries(
        Object.entries(env).filter(
          (entry): entry is [string, string] => claudeForwarded(entry[0]) && entry[1] !== undefined,
        ),
      )
    : {};

// With --agent gemini the edge drives Gemini CLI over ACP. TETHER_GEMINI_FAKE_PROVIDER=1 puts the
// project's fake Gemini API behind it (offline); otherwise Gemini uses the forwarded
// GEMINI_API_KEY (README "The Gemini demo edge").
const geminiFake = agent === 'gemini' && env.TETHER_GEMINI_FAKE_PROVIDER === '1';
const geminiForwarded = (name: string): boolean =>
  name === 'TETHER_GEMINI_PATH' ||
  name === 'TETHER_ACP_HOME' ||
  name === 'TETHER_ACP_AGENTS' ||
  name === 'TETHER_ACP_ENV_ALLOW' ||
  (!geminiFake && (name === 'GEMINI_API_KEY' || name.startsWith('GOOGLE_')));
const geminiEnv: Record<string, string> =
  agent === 'gemini'
    ? Object.fromEntries(
        Object.entries(env).filter(
          (entry): entry is [string, string] => geminiForwarded(entry[0]) && entry[1] !== undefined,
        ),
      )
    : {};

const stack = new Stack({
  natsUrl: env.TETHER_NATS_URL ?? 'nats://127.0.0.1:4222',
  ...natsOptionsFromEnv(env),
  redisUrl: env.TETHER_REDIS_URL ?? 'redis://127.0.0.1:6379',
  databaseUrl,
  namespace: env.TETHER_NAMESPACE ?? 'tether',
  httpHost: env.TETHER_HTTP_HOST ?? '127.0.0.1',
  httpPort: Number(env.TETHER_HTTP_PORT ?? 8080),
  jwtSecret: env.TETHER_JWT_SECRET ?? DEV_JWT_SECRET,
  edgeSecret: env.TETHER_EDGE_SECRET ?? DEV_EDGE_SECRET,
  historyKey: env.TETHER_HISTORY_KEY ?? DEV_HISTORY_KEY,
  journalKey: env.TETHER_JOURNAL_KEY ?? DEV_JOURNAL_KEY,
  demoOwner: env.TETHER_DEMO_OWNER ?? 'demo',
  agent,
  edgeDataDir,
  // Humans read this output: Nest's text logs unless asked otherwise; OTEL_* and a fixed ops port
  // pass through so the stack can be traced and scraped.
  extraEnv: {
    TETHER_LOG_FORMAT: env.TETHER_LOG_FORMAT ?? 'text',
    ...Object.fromEntries(
      Object.entries(env).filter(
        (entry): entry is [string, string] =>
          (entry[0].startsWith('OTEL_') || entry[0] === 'TETHER_METRICS_PORT') && Boolean(entry[1]),
      ),
    ),
  },
  edgeEnv: {
    ...codexEnv,
    ...claudeEnv,
    ...geminiEnv,
    ...(allowRoot ? { TETHER_EDGE_ALLOW_ROOT: allowRoot } : {}),
  },
  output: 'inherit',
  codexFakeProvider: fakeProvider,
  claudeFakeProvider: claudeFake,
  geminiFakeProvider: geminiFake,
});

let stopping = false;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    await stack.down();
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

try {
  await prepareDatabase(databaseUrl);
  await stack.up();
} catch (error) {
  console.error(`Tether did not start: ${(error as Error).message}`);
  await stop(1);
}
console.log(
  [
    '',
    `Tether is ready at ${stack.apiUrl}`,
    `  demo owner: ${stack.options.demoOwner}   demo edge id: ${stack.edge?.id}   agent: ${stack.options.agent}` +
      (stack.fakeProvider ? ` (scripted provider at ${stack.fakeProvider.baseUrl})` : '') +
      (stack.claudeProvider ? ` (scripted Messages API at ${stack.claudeProvider.baseUrl})` : '') +
      (stack.fakeGemini ? ` (fake Gemini API at ${stack.fakeGemini.baseUrl})` : ''),
    `  token:      npm run token -- --sub ${stack.options.demoOwner}`,
    '  Ctrl-C stops everything.',
    '',
  ].join('\n'),
);
