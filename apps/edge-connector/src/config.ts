import { homedir } from 'node:os';
import { z } from 'zod';
import {
  boolVar,
  checkNatsEnv,
  DEVELOPMENT_SECRETS,
  intVar,
  loadConfig,
  logLevelVar,
  namespaceVar,
  natsEnv,
  natsSettings,
  nodeEnvVar,
  optionalStringVar,
  refuseWeakSecrets,
  type NatsSettings,
} from '#config';
import { edgeToken, isEdgeId, Limits } from '#contracts';
import { metricsPortVar, shutdownGraceVar, type MetricsPort } from '#telemetry';

export const AGENT_KINDS = ['scripted', 'codex', 'claude', 'acp'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

const isAgentKind = (name: string): name is AgentKind => (AGENT_KINDS as readonly string[]).includes(name);

/**
 * `TETHER_AGENT`: one driver, or a comma list of the real ones (`codex,claude,acp`) that one edge
 * runs side by side. The scripted agent stands alone: it answers every start the same way, so
 * beside a real agent it would only hide which one a session ran with.
 */
const agentsVar = () =>
  z
    .string()
    .default('scripted')
    .transform((value, ctx): AgentKind[] => {
      const names = value.split(',').map((name) => name.trim());
      const fail = (message: string): AgentKind[] => {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      };
      if (names.some((name) => name === '')) return fail('must not have an empty entry');
      const unknown = names.filter((name) => !isAgentKind(name));
      if (unknown.length > 0)
        return fail(`names an unknown agent (${unknown.join(', ')}); use ${AGENT_KINDS.join(', ')}`);
      const kinds = names.filter(isAgentKind);
      if (new Set(kinds).size !== kinds.length) return fail('names an agent twice');
      if (kinds.length > 1 && kinds.includes('scripted'))
        return fail('`scripted` runs alone; list only codex, claude and acp together');
      return kinds;
    });

/** Environment variable names an edge owner lets a declared agent inherit. */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name');

/**
 * `TETHER_ACP_AGENTS`: ACP agents the edge owner declares beside the known ones, as JSON. Only the
 * edge's own configuration can name a command line; no request ever can.
 */
const declaredAgentsVar = () =>
  z.preprocess(
    (value) => {
      if (value === undefined || value === '') return [];
      try {
        return JSON.parse(String(value)) as unknown;
      } catch {
        return value;
      }
    },
    z
      .array(
        z.strictObject({
          name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'must be 1-32 characters of a-z, 0-9, _ or -'),
          command: z
            .string()
            .min(2)
            .max(4096)
            .refine(
              (command) => command.startsWith('/') && !command.includes('\0'),
              'must be an absolute path',
            ),
          args: z.array(z.string().max(4096)).max(32).default([]),
          env: z.array(envName).max(64).default([]),
        }),
      )
      .max(8),
  );

const envSchema = z.object({
  NODE_ENV: nodeEnvVar(),
  ...natsEnv,
  TETHER_NAMESPACE: namespaceVar(),
  TETHER_LOG_LEVEL: logLevelVar(),
  // The connector id from enrollment; it is also one NATS subject token (`<ns>.edge.<id>.rpc`).
  TETHER_EDGE_ID: z.string().refine(isEdgeId, 'must be a non-zero decimal uint64 without leading zeros'),
  TETHER_EDGE_TOKEN: z.string().min(1, 'must be set (mint it with `npm run enroll`)'),
  TETHER_AGENT: agentsVar(),
  TETHER_EDGE_DATA_DIR: optionalStringVar(),
  TETHER_SCRIPTED_SCRIPT: optionalStringVar(),
  TETHER_EDGE_ALLOW_ROOT: boolVar(false),
  TETHER_CODEX_PATH: optionalStringVar(),
  TETHER_CODEX_HOME: optionalStringVar(),
  TETHER_CODEX_ENV_ALLOW: optionalStringVar(),
  TETHER_CLAUDE_PATH: optionalStringVar(),
  TETHER_CLAUDE_CONFIG_DIR: optionalStringVar(),
  TETHER_CLAUDE_ENV_ALLOW: optionalStringVar(),
  TETHER_GEMINI_PATH: optionalStringVar(),
  TETHER_ACP_HOME: optionalStringVar(),
  TETHER_ACP_ENV_ALLOW: optionalStringVar(),
  TETHER_ACP_AGENTS: declaredAgentsVar(),
  TETHER_ACP_SPARES: boolVar(true),
  /** Ops endpoints; off by default on an owner's machine (docs/observability.md). */
  TETHER_METRICS_PORT: metricsPortVar('off'),
  TETHER_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  TETHER_SHUTDOWN_GRACE_MS: shutdownGraceVar(),
  /**
   * Heartbeat period (docs/reliability.md "Edge liveness"): routers count the edge offline after
   * 2 periods of silence (then a probe confirms it). Longer saves messages on a large fleet; shorter notices a dead edge sooner.
   */
  TETHER_EDGE_HEARTBEAT_MS: intVar(
    Limits.EDGE_HEARTBEAT_INTERVAL_MS,
    Limits.EDGE_HEARTBEAT_INTERVAL_MIN_MS,
    Limits.EDGE_HEARTBEAT_INTERVAL_MAX_MS,
  ),
});

export interface EdgeConfig {
  /** Seed URLs, and the edge's own NATS credentials and TLS material when the cluster wants them. */
  nats: NatsSettings;
  namespace: string;
  logLevel: z.infer<ReturnType<typeof logLevelVar>>;
  edgeId: string;
  edgeToken: string;
  /** The drivers this edge runs (TETHER_AGENT); several real ones share the edge. */
  agents: readonly AgentKind[];
  /** Where the edge keeps its own files (resume bindings, later); defaults under the home directory. */
  dataDir: string;
  scriptedScript?: string;
  /** Agents refuse to run as root unless this is set (containers in CI). */
  allowRoot: boolean;
  /** The account's home directory: the default project and a browse root. */
  homeDir: string;
  /** Codex driver settings (agent/codex reads them through the driver registry). */
  codex: { codexPath?: string; codexHome?: string; envAllowList: string[] };
  /** Claude Code driver settings; `stateDir` is the edge's private CLAUDE_CONFIG_DIR. */
  claude: { claudePath?: string; stateDir: string; envAllowList: string[] };
  /** ACP driver settings (agent/acp reads them through the driver registry). */
  acp: {
    geminiPath?: string;
    /** Private agent homes of this edge (Gemini CLI's GEMINI_CLI_HOME is `<homesDir>/gemini`). */
    homesDir: string;
    envAllowList: string[];
    declared: { name: string; command: string; args: string[]; env: string[] }[];
    spares: boolean;
  };
  /** The edge's own environment, for agent discovery and allow-listed forwarding to agents. */
  environment: Readonly<Record<string, string | undefined>>;
  metricsPort: MetricsPort;
  /** Loopback unless asked: an owner's machine exposes nothing by default. */
  metricsHost: string;
  /** How long SIGTERM waits for sessions to stop and updates to flush (docs/operations.md). */
  shutdownGraceMs: number;
  heartbeatIntervalMs: number;
}

const commaList = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);

/**
 * In production an edge refuses a token minted from one of the published development secrets: the
 * deployment that accepts it accepts anyone's (docs/operations.md, rotating the edge secret).
 */
function refuseDevelopmentToken(env: z.infer<typeof envSchema>, ctx: z.RefinementCtx): void {
  if (env.NODE_ENV !== 'production') return;
  if (DEVELOPMENT_SECRETS.some((secret) => edgeToken(secret, env.TETHER_EDGE_ID) === env.TETHER_EDGE_TOKEN)) {
    ctx.addIssue({
      code: 'custom',
      path: ['TETHER_EDGE_TOKEN'],
      message: 'was minted from a development TETHER_EDGE_SECRET; enroll against a production deployment',
    });
  }
}

export const edgeConfigSchema = envSchema
  .superRefine(checkNatsEnv)
  .superRefine(refuseWeakSecrets(['TETHER_EDGE_TOKEN']))
  .superRefine(refuseDevelopmentToken)
  .transform((env): EdgeConfig => {
    const dataDir = env.TETHER_EDGE_DATA_DIR ?? `${homedir()}/.tether/edge`;
    return {
      nats: natsSettings(env),
      namespace: env.TETHER_NAMESPACE,
      logLevel: env.TETHER_LOG_LEVEL,
      edgeId: env.TETHER_EDGE_ID,
      edgeToken: env.TETHER_EDGE_TOKEN,
      agents: env.TETHER_AGENT,
      dataDir,
      scriptedScript: env.TETHER_SCRIPTED_SCRIPT,
      allowRoot: env.TETHER_EDGE_ALLOW_ROOT,
      homeDir: homedir(),
      codex: {
        codexPath: env.TETHER_CODEX_PATH,
        codexHome: env.TETHER_CODEX_HOME,
        envAllowList: commaList(env.TETHER_CODEX_ENV_ALLOW),
      },
      claude: {
        claudePath: env.TETHER_CLAUDE_PATH,
        stateDir: env.TETHER_CLAUDE_CONFIG_DIR ?? `${dataDir}/claude`,
        envAllowList: commaList(env.TETHER_CLAUDE_ENV_ALLOW),
      },
      acp: {
        geminiPath: env.TETHER_GEMINI_PATH,
        homesDir: env.TETHER_ACP_HOME ?? `${dataDir}/agent-homes`,
        envAllowList: commaList(env.TETHER_ACP_ENV_ALLOW),
        declared: env.TETHER_ACP_AGENTS,
        spares: env.TETHER_ACP_SPARES,
      },
      environment: {},
      metricsPort: env.TETHER_METRICS_PORT,
      metricsHost: env.TETHER_METRICS_HOST,
      shutdownGraceMs: env.TETHER_SHUTDOWN_GRACE_MS,
      heartbeatIntervalMs: env.TETHER_EDGE_HEARTBEAT_MS,
    };
  });

/** Reads the edge's configuration once, at boot. */
export function loadEdgeConfig(env: Record<string, string | undefined> = process.env): EdgeConfig {
  return { ...loadConfig(edgeConfigSchema, env), environment: Object.freeze({ ...env }) };
}
