// What every driver that runs its agent as a child process shares before the spawn: the accounts
// it refuses, the environment a child may inherit, where discovery looks, and how an npm `.js`
// entry point is launched through node.
import path from 'node:path';
import {
  type AgentDriver,
  type AgentSession,
  type DiscoveryResult,
  DriverError,
  type OpenSessionOptions,
} from './agent-driver.js';
import type { DiscoveryEnvironment, DiscoveryInput } from './install-discovery.js';

/** The account basics every child may inherit. */
export const ACCOUNT_ENV_NAMES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'TERM',
  'TZ',
  'TMPDIR',
];

/** Proxy settings every child may inherit, in both spellings. */
export const PROXY_ENV_NAMES: readonly string[] = [
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'https_proxy',
  'http_proxy',
  'no_proxy',
];

/** Account basics, certificates (node's included) and proxies: what a node-based agent needs. */
export const NODE_AGENT_ENV_ALLOW_LIST: readonly string[] = [
  ...ACCOUNT_ENV_NAMES,
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  ...PROXY_ENV_NAMES,
];

/** The allow-listed variables of `source` (no NUL), plus CODEX_HOME when given. */
export function buildChildEnvironment(
  source: Readonly<Record<string, string | undefined>>,
  allowList: readonly string[],
  codexHome: string | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of new Set(allowList)) {
    const value = source[name];
    if (typeof value === 'string' && !value.includes('\0')) env[name] = value;
  }
  if (codexHome !== undefined) env.CODEX_HOME = codexHome;
  return env;
}

export interface LaunchSpec {
  /** The executable: the native binary, or a node interpreter for the npm `.js` entry point. */
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** The driver settings the shared launch steps read. */
export interface ChildDriverConfig {
  /** `TETHER_EDGE_ALLOW_ROOT`: let the root account launch the agent (tests, containers). */
  allowRoot?: boolean;
  /** The edge's own environment; launches inherit only the allow-listed names. */
  environment: Readonly<Record<string, string | undefined>>;
  /** Directories whose `node_modules/.bin` may hold a local install (default: the working directory). */
  localDirs?: string[];
  /** Node interpreter for npm `.js` entry points (default: the node running the edge). */
  nodePath?: string;
}

/** Throws `unsupported_user` on Windows, and for root unless allowed (`rootRefusal` says what). */
function refuseUnsupportedAccount(config: ChildDriverConfig, rootRefusal: string): void {
  if (process.platform === 'win32')
    throw new DriverError('unsupported_user', 'Windows edges are not supported');
  if (process.getuid?.() === 0 && config.allowRoot !== true) {
    throw new DriverError('unsupported_user', rootRefusal);
  }
}

/**
 * Runs a driver's discovery for a supported account, looking where `config` says (the edge's
 * environment, the local folders, node's own prefix); any failure of it is `unavailable`.
 */
export async function runDiscovery<T>(
  config: ChildDriverConfig,
  rootRefusal: string,
  discover: (where: DiscoveryEnvironment) => Promise<T>,
  failure: string,
): Promise<T> {
  refuseUnsupportedAccount(config, rootRefusal);
  try {
    return await discover({
      env: config.environment,
      localDirs: config.localDirs ?? [process.cwd()],
      nodePrefix: path.dirname(path.dirname(process.execPath)),
    });
  } catch {
    throw new DriverError('unavailable', failure);
  }
}

/** The checks before any session opens: a supported account and an absolute session directory. */
export function checkOpen(config: ChildDriverConfig, rootRefusal: string, cwd: string): void {
  refuseUnsupportedAccount(config, rootRefusal);
  if (!path.isAbsolute(cwd))
    throw new DriverError('invalid_request', 'The session directory must be absolute');
}

/** Launches an npm `.js` entry point through the configured (absolute) node interpreter. */
export function throughNode(
  config: ChildDriverConfig,
  entryPoint: string,
  launch: Omit<LaunchSpec, 'command'>,
  refusal: string,
): LaunchSpec {
  const nodePath = config.nodePath ?? process.execPath;
  if (!path.isAbsolute(nodePath)) throw new DriverError('launch_failed', refusal);
  return { command: nodePath, args: [entryPoint, ...launch.args], cwd: launch.cwd, env: launch.env };
}

/** How a child-process driver finds its agent: the name its messages use and its discovery. */
export interface ChildAgent {
  /** The installation kind the driver answers for (`codex`, `claude`). */
  kind: string;
  /** The agent as messages name it (`Codex`, `Claude Code`). */
  name: string;
  /** An explicit installation the operator configured, looked at first. */
  explicitPath: string | undefined;
  discover: (input: DiscoveryInput) => Promise<DiscoveryResult>;
  /** The launchable file a candidate resolves to now, or undefined. */
  resolve: (candidate: string) => Promise<string | undefined>;
  /** The installation id of a candidate and the file it resolved to. */
  installationId: (candidate: string, resolved: string) => string;
}

/**
 * A driver whose sessions are child processes: discovery and opening run for a supported account
 * only, and a session opens in an absolute directory; the subclass launches.
 */
export abstract class ChildProcessDriver<C extends ChildDriverConfig> implements AgentDriver {
  readonly kind: string;
  private readonly rootRefusal: string;

  constructor(
    protected readonly config: C,
    private readonly agent: ChildAgent,
  ) {
    this.kind = agent.kind;
    this.rootRefusal = `${agent.name} is not launched for the root account`;
  }

  discover(): Promise<DiscoveryResult> {
    const { explicitPath } = this.agent;
    return runDiscovery(
      this.config,
      this.rootRefusal,
      (where) => this.agent.discover({ ...(explicitPath ? { explicitPath } : {}), ...where }),
      `${this.agent.name} discovery failed`,
    );
  }

  async open(options: OpenSessionOptions): Promise<AgentSession> {
    checkOpen(this.config, this.rootRefusal, options.cwd);
    return this.launch(options);
  }

  /**
   * The file the session's installation resolves to now. The id binds the candidate to what it
   * resolved to at discovery, so a link swapped since then is refused.
   */
  protected async resolvedInstallation(options: OpenSessionOptions): Promise<string> {
    const candidate = options.installation.path;
    const resolved = candidate ? await this.agent.resolve(candidate) : undefined;
    if (
      !candidate ||
      !resolved ||
      this.agent.installationId(candidate, resolved) !== options.installation.id
    ) {
      throw new DriverError('launch_failed', `The ${this.agent.name} installation is no longer available`);
    }
    return resolved;
  }

  /** A native binary runs directly; an npm `.js` entry point runs through node. */
  protected command(resolved: string, launch: Omit<LaunchSpec, 'command'>): LaunchSpec {
    if (!resolved.endsWith('.js')) return { command: resolved, ...launch };
    const refusal = `No absolute node interpreter for the ${this.agent.name} entry point`;
    return throughNode(this.config, resolved, launch, refusal);
  }

  /** Starts the session's process (the preconditions hold). */
  protected abstract launch(options: OpenSessionOptions): Promise<AgentSession>;
}
