// `npm run bench -- <name> [--quick] [--profile]`: runs one benchmark, prints its table and writes
// bench/results/<name>-<timestamp>.json. Benchmarks are not tests; nothing here asserts timings.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface BenchOptions {
  quick: boolean;
  /** B4 only: measure history's own drain capacity from a published backlog (bench/ingest.ts). */
  drain: boolean;
  /** Write V8 CPU profiles of the services here and summarize them (B1 only). */
  profileDir?: string;
  /**
   * Extra environment for every service (`--service-env KEY=VALUE`, repeatable; relay, codex and claude):
   * A/B runs of a switch such as `TETHER_AUTHORIZE_CACHE_MS=0` on the same machine and minute.
   */
  serviceEnv: Record<string, string>;
  /**
   * `--sessions=N` (events and footprint): the session count instead of the default, to record
   * the cost curve (docs/benchmarks.md, "B2: the page rides on the notice") or find what a machine holds.
   */
  sessions?: number;
}

function sessionsFlag(argv: string[]): number | undefined {
  const raw = argv.find((arg) => arg.startsWith('--sessions='));
  if (raw === undefined) return undefined;
  const value = Number(raw.slice('--sessions='.length));
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new Error(`--sessions takes a positive integer, got ${raw}`);
  return value;
}

function serviceEnv(argv: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  argv.forEach((arg, index) => {
    if (arg !== '--service-env') return;
    const pair = argv[index + 1] ?? '';
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--service-env takes KEY=VALUE, got ${JSON.stringify(pair)}`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  });
  return env;
}

const BENCHMARKS: Record<string, { what: string; run: (options: BenchOptions) => Promise<void> }> = {
  relay: {
    what: 'B1 relay overhead: poll through the chain vs a bare HTTP→NATS baseline',
    run: async (o) => (await import('./relay.js')).relay(o),
  },
  events: {
    what: 'B2 event latency: edge emit → watch return',
    run: async (o) => (await import('./events.js')).events(o),
  },
  footprint: {
    what: 'B3 footprint: Redis per session and lease, router/api RSS with idle sessions and open watchers',
    run: async (o) => (await import('./footprint.js')).footprint(o),
  },
  ingest: {
    what: 'B4 history ingest: journal rows persisted per second and consumer lag',
    run: async (o) => (await import('./ingest.js')).ingest(o),
  },
  heartbeats: {
    what: 'Edge heartbeats at fleet size: NATS messages/s, router CPU and Redis load of 10,000 edges',
    run: async (o) => (await import('./heartbeats.js')).heartbeats(o),
  },
  flood: {
    what: 'B6 flood: one user with 2,000 SSE streams and a burst of sends; another user’s p95 quiet vs flooded',
    run: async (o) => (await import('./flood.js')).flood(o),
  },
  scaling: {
    what: 'What scales each service on the clustered set-up (NATS ×3, Redis Cluster, api ×2, router ×3, history ×2): cost per poll, per SSE stream, per journal row',
    run: async (o) => (await import('./scaling.js')).scaling(o),
  },
  codex: {
    what: 'B5 Codex overhead: dispatch and first reply through Tether vs codex app-server driven directly',
    run: async (o) => (await import('./codex.js')).codex(o),
  },
  claude: {
    what: 'B5 Claude Code overhead: dispatch and first reply through Tether vs claude stream-json driven directly',
    run: async (o) => (await import('./codex.js')).claude(o),
  },
  gemini: {
    what: 'B5 Gemini rows: dispatch and first reply through Tether vs Gemini CLI over ACP directly; start with the spare',
    run: async (o) => (await import('./gemini.js')).gemini(o),
  },
};

const args = process.argv.slice(2);
const name = args.find((arg, index) => !arg.startsWith('--') && args[index - 1] !== '--service-env');
const benchmark = name ? BENCHMARKS[name] : undefined;
if (!benchmark) {
  console.error(
    `usage: npm run bench -- <name> [--quick] [--profile] [--drain (ingest)] [--sessions=N (events, footprint)] [--service-env KEY=VALUE]...\n${Object.entries(
      BENCHMARKS,
    )
      .map(([key, value]) => `  ${key.padEnd(10)} ${value.what}`)
      .join('\n')}`,
  );
  process.exit(2);
}
const options: BenchOptions = {
  quick: args.includes('--quick'),
  drain: args.includes('--drain'),
  profileDir: args.includes('--profile') ? mkdtempSync(join(tmpdir(), 'tether-bench-prof-')) : undefined,
  serviceEnv: serviceEnv(args),
  sessions: sessionsFlag(args),
};
try {
  await benchmark.run(options);
  process.exit(0);
} catch (error) {
  console.error(error);
  process.exit(1);
}
