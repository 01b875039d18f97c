// The demo edge of docker-compose: enrolls (or reuses) the connector `demo-edge` for
// TETHER_DEMO_OWNER and runs the edge connector with its credentials, restarting nothing itself
// (compose restarts the container). The services it talks to are named by the usual variables.
import { natsOptionsFromEnv, Stack } from './launcher.js';

const env = process.env;
const stack = new Stack({
  natsUrl: env.TETHER_NATS_URL ?? 'nats://127.0.0.1:4222',
  ...natsOptionsFromEnv(env),
  redisUrl: env.TETHER_REDIS_URL ?? 'redis://127.0.0.1:6379',
  databaseUrl: env.TETHER_DATABASE_URL ?? '',
  namespace: env.TETHER_NAMESPACE ?? 'tether',
  httpHost: '127.0.0.1',
  httpPort: 0,
  jwtSecret: '',
  edgeSecret: env.TETHER_EDGE_SECRET ?? '',
  demoOwner: env.TETHER_DEMO_OWNER ?? 'demo',
  agent: env.TETHER_AGENT === 'codex' || env.TETHER_AGENT === 'claude' ? env.TETHER_AGENT : 'scripted',
  edgeDataDir: env.TETHER_EDGE_DATA_DIR ?? '/var/lib/tether-edge',
  edgeEnv: Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] =>
        (entry[0].startsWith('TETHER_CODEX_') ||
          entry[0].startsWith('OPENAI_') ||
          entry[0].startsWith('TETHER_CLAUDE_') ||
          entry[0].startsWith('ANTHROPIC_') ||
          entry[0] === 'CLAUDE_CODE_OAUTH_TOKEN' ||
          // Telemetry: where to send spans, and the edge's ops port (docs/observability.md).
          entry[0].startsWith('OTEL_') ||
          entry[0].startsWith('TETHER_METRICS_') ||
          entry[0] === 'TETHER_EDGE_ALLOW_ROOT') &&
        entry[1] !== undefined &&
        entry[1] !== '',
    ),
  ),
  output: 'inherit',
  // docker compose --profile codex: the scripted provider keeps the Codex demo edge offline.
  codexFakeProvider: env.TETHER_CODEX_FAKE_PROVIDER === '1',
  claudeFakeProvider: env.TETHER_CLAUDE_FAKE_PROVIDER === '1',
  demoEdgeName: env.TETHER_DEMO_EDGE_NAME || undefined,
});

if (!env.TETHER_EDGE_SECRET) {
  console.error('TETHER_EDGE_SECRET must be set.');
  process.exit(2);
}
await stack.historyReady();
const edge = await stack.enrollDemoEdge();
console.log(`Demo edge ${edge.id} enrolled for ${stack.options.demoOwner}; starting the edge connector.`);
await stack.start('edge');
const stop = () => void stack.down().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
