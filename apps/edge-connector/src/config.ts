import { homedir } from 'node:os';
import { z } from 'zod';
import { boolVar, intVar, loadConfig, logLevelVar, natsUrlVar } from '#config';
import { DEFAULT_NAMESPACE, Limits, isEdgeId } from '#contracts';
import { metricsPortVar, type MetricsPort } from '#telemetry';

/** An unset variable and an empty one mean the same: not configured. */
const optionalString = () =>
  z.preprocess((value) => (value === '' ? undefined : value), z.string().optional());

export const AGENT_KINDS = ['scripted', 'codex'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

const envSchema = z.object({
  TETHER_NATS_URL: natsUrlVar(),
  TETHER_NAMESPACE: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'must be 1-32 characters of a-z, 0-9, _ or -, starting with a letter')
    .default(DEFAULT_NAMESPACE),
  TETHER_LOG_LEVEL: logLevelVar(),
  // The connector id from enrollment; it is also one NATS subject token (`<ns>.edge.<id>.rpc`).
  TETHER_EDGE_ID: z.string().refine(isEdgeId, 'must be a non-zero decimal uint64 without leading zeros'),
  TETHER_EDGE_TOKEN: z.string().min(1, 'must be set (mint it with `npm run enroll`)'),
  TETHER_AGENT: z.enum(AGENT_KINDS).default('scripted'),
  TETHER_EDGE_DATA_DIR: optionalString(),
  TETHER_SCRIPTED_SCRIPT: optionalString(),
  TETHER_EDGE_ALLOW_ROOT: boolVar(false),
  TETHER_CODEX_PATH: optionalString(),
  TETHER_CODEX_HOME: optionalString(),
  TETHER_CODEX_ENV_ALLOW: optionalString(),
  /** Ops endpoints; off by default on an owner's machine (docs/observability.md). */
  TETHER_METRICS_PORT: metricsPortVar('off'),
  TETHER_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
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
  natsUrl: string;
  namespace: string;
  logLevel: z.infer<ReturnType<typeof logLevelVar>>;
  edgeId: string;
  edgeToken: string;
  agent: AgentKind;
  /** Where the edge keeps its own files (resume bindings, later); defaults under the home directory. */
  dataDir: string;
  scriptedScript?: string;
  /** Agents refuse to run as root unless this is set (containers in CI). */
  allowRoot: boolean;
  /** The account's home directory: the default project and a browse root. */
  homeDir: string;
  /** Codex driver settings (agent/codex reads them through the driver registry). */
  codex: { codexPath?: string; codexHome?: string; envAllowList: string[] };
  /** The edge's own environment, for agent discovery and allow-listed forwarding to agents. */
  environment: Readonly<Record<string, string | undefined>>;
  metricsPort: MetricsPort;
  /** Loopback unless asked: an owner's machine exposes nothing by default. */
  metricsHost: string;
  heartbeatIntervalMs: number;
}

export const edgeConfigSchema = envSchema.transform((env): EdgeConfig => ({
  natsUrl: env.TETHER_NATS_URL,
  namespace: env.TETHER_NAMESPACE,
  logLevel: env.TETHER_LOG_LEVEL,
  edgeId: env.TETHER_EDGE_ID,
  edgeToken: env.TETHER_EDGE_TOKEN,
  agent: env.TETHER_AGENT,
  dataDir: env.TETHER_EDGE_DATA_DIR ?? `${homedir()}/.tether/edge`,
  scriptedScript: env.TETHER_SCRIPTED_SCRIPT,
  allowRoot: env.TETHER_EDGE_ALLOW_ROOT,
  homeDir: homedir(),
  codex: {
    codexPath: env.TETHER_CODEX_PATH,
    codexHome: env.TETHER_CODEX_HOME,
    envAllowList: (env.TETHER_CODEX_ENV_ALLOW ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  },
  environment: {},
  metricsPort: env.TETHER_METRICS_PORT,
  metricsHost: env.TETHER_METRICS_HOST,
  heartbeatIntervalMs: env.TETHER_EDGE_HEARTBEAT_MS,
}));

/** Reads the edge's configuration once, at boot. */
export function loadEdgeConfig(env: Record<string, string | undefined> = process.env): EdgeConfig {
  return { ...loadConfig(edgeConfigSchema, env), environment: Object.freeze({ ...env }) };
}
