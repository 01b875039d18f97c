// The ACP driver: any agent that speaks the Agent Client Protocol on its stdio (Gemini CLI,
// OpenCode, claude-code-acp, codex-acp, or one the edge owner declares), one process per session.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Logger } from '@nestjs/common';
import {
  DriverError,
  type AgentDriver,
  type AgentSession,
  type DiscoveryResult,
  type OpenSessionOptions,
} from '../agent-driver.js';
import {
  buildChildEnvironment,
  checkOpen,
  type ChildDriverConfig,
  type LaunchSpec,
  NODE_AGENT_ENV_ALLOW_LIST,
  runDiscovery,
  throughNode,
} from '../child-launch.js';
import { GEMINI, KNOWN_AGENTS, type DeclaredAgent } from './acp-agents.js';
import { AcpConnection } from './acp-connection.js';
import { acpInstallationId, discoverAcp, resolveAgentFile, type AcpInstallation } from './acp-discovery.js';
import { SPARE_HANDSHAKE_TIMEOUT_MS, SPARE_WAIT_MS, SPARES_MAX } from './acp-limits.js';
import { AcpSession } from './acp-session.js';
import { createdThisMinute, prepareGeminiHome } from './gemini-home.js';

export { AcpSession } from './acp-session.js';
export type { DeclaredAgent } from './acp-agents.js';

/** Variables every ACP launch may inherit; each agent adds its own provider keys. */
export const COMMON_ENV_ALLOW_LIST: readonly string[] = NODE_AGENT_ENV_ALLOW_LIST;

export interface AcpDriverConfig extends ChildDriverConfig {
  /** `TETHER_GEMINI_PATH`: an explicit Gemini CLI (binary or the npm `gemini.js`), looked at first. */
  geminiPath?: string;
  /** Private homes of the agents that have one (`<dir>/gemini` is Gemini CLI's GEMINI_CLI_HOME). */
  homesDir: string;
  /** `TETHER_ACP_AGENTS`: agents the edge owner declared (command, arguments, environment names). */
  declared: readonly DeclaredAgent[];
  /** `TETHER_ACP_ENV_ALLOW`: names every ACP launch may also inherit. */
  envAllowList?: readonly string[];
  /** Keep one initialized spare process per installation (default true). */
  spares?: boolean;
}

const ROOT_REFUSAL = 'ACP agents are not launched for the root account';

class AcpDriver implements AgentDriver {
  readonly kind = 'acp';
  private readonly log = new Logger(AcpDriver.name);
  private readonly known = new Map<string, AcpInstallation>();
  private readonly spares = new Map<string, Promise<AcpConnection>>();
  private geminiHomeReady: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly config: AcpDriverConfig) {}

  async discover(): Promise<DiscoveryResult> {
    const explicit = this.config.geminiPath
      ? { explicit: { spec: GEMINI, path: this.config.geminiPath } }
      : {};
    const result = await runDiscovery(
      this.config,
      ROOT_REFUSAL,
      (where) => discoverAcp({ agents: KNOWN_AGENTS, ...explicit, declared: this.config.declared, ...where }),
      'ACP agent discovery failed',
    );
    this.known.clear();
    for (const entry of result.found) this.known.set(entry.installation.id, entry);
    const spared = this.config.spares === false ? [] : result.found.slice(0, SPARES_MAX);
    // A spare of an installation that is gone (or past the bound now) is stopped, not left idle.
    for (const [id, spare] of this.spares) {
      if (spared.some((entry) => entry.installation.id === id)) continue;
      this.spares.delete(id);
      void spare.then(
        (connection) => connection.stop(),
        () => undefined,
      );
    }
    for (const entry of spared) this.warm(entry);
    return { installations: result.found.map((entry) => entry.installation), truncated: result.truncated };
  }

  async open(options: OpenSessionOptions): Promise<AgentSession> {
    checkOpen(this.config, ROOT_REFUSAL, options.cwd);
    const entry = await this.installation(options.installation.id);
    if (options.threadId !== undefined && entry.spec === GEMINI) {
      // Loading in the creation minute would erase the history (see gemini-home.ts): try later.
      if (await createdThisMinute(this.home(entry), options.threadId)) {
        throw new DriverError('busy', 'Gemini CLI can load this session from the next minute on');
      }
    }
    try {
      const connection = await this.connection(entry, options.cwd);
      return await AcpSession.open(connection, options);
    } finally {
      // The next spare boots once this session is open: booting is CPU-heavy (~1.7 s of a core for
      // Gemini CLI) and would otherwise slow this very start.
      if (this.config.spares !== false) this.warm(entry);
    }
  }

  /** Stops the spare processes (edge shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    const spares = [...this.spares.values()];
    this.spares.clear();
    await Promise.allSettled(spares.map(async (spare) => (await spare).stop()));
  }

  /** The discovered installation, still resolving to the same file (a swapped link is refused). */
  private async installation(id: string): Promise<AcpInstallation> {
    const entry = this.known.get(id);
    const resolved = entry && (await resolveAgentFile(entry.spec, entry.installation.path ?? ''));
    if (
      !entry ||
      !resolved ||
      resolved !== entry.resolved ||
      acpInstallationId(entry.spec.kind, entry.installation.path ?? '', resolved) !== id
    ) {
      throw new DriverError('launch_failed', 'The agent installation is no longer available');
    }
    return entry;
  }

  /**
   * The spare when there is a live one, else a fresh process. A spare still booting is waited for
   * up to SPARE_WAIT_MS; past that the start answers `unavailable` and the spare stays for the next.
   */
  private async connection(entry: AcpInstallation, cwd: string): Promise<AcpConnection> {
    const id = entry.installation.id;
    const spare = this.spares.get(id);
    if (spare) {
      this.spares.delete(id);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), SPARE_WAIT_MS);
      });
      const ready = await Promise.race([spare.catch(() => undefined), late]);
      clearTimeout(timer);
      if (ready === 'late') {
        if (!this.spares.has(id) && !this.closed) this.spares.set(id, spare);
        throw new DriverError('unavailable', 'The agent is still starting');
      }
      if (ready && !ready.closed) return ready;
    }
    try {
      return await AcpConnection.launch(await this.launchSpec(entry, cwd));
    } catch {
      throw new DriverError('launch_failed', 'The agent could not be started');
    }
  }

  /**
   * Starts and initializes a process before anyone asks (Gemini CLI needs ~1.7 s to boot). It
   * runs in a private empty folder; `session/new` gives it the session directory, where its tools
   * work.
   */
  private warm(entry: AcpInstallation): void {
    const id = entry.installation.id;
    if (this.closed || this.spares.has(id)) return;
    const spare = (async () => {
      const dir = path.join(this.config.homesDir, 'spare');
      await mkdir(dir, { recursive: true, mode: 0o700 });
      return AcpConnection.launch(await this.launchSpec(entry, dir), SPARE_HANDSHAKE_TIMEOUT_MS);
    })();
    this.spares.set(id, spare);
    spare.then(
      (connection) => {
        // A spare that dies while waiting is replaced on the next start.
        void connection.process.exited.then(() => {
          if (this.spares.get(id) === spare) this.spares.delete(id);
        });
      },
      () => {
        if (this.spares.get(id) === spare) this.spares.delete(id);
        this.log.warn(`A spare ${entry.spec.kind} process did not start.`);
      },
    );
  }

  private home(entry: AcpInstallation): string {
    return path.join(this.config.homesDir, entry.spec.kind);
  }

  private async launchSpec(entry: AcpInstallation, cwd: string): Promise<LaunchSpec> {
    const { spec, resolved } = entry;
    const env = buildChildEnvironment(
      this.config.environment,
      [...COMMON_ENV_ALLOW_LIST, ...spec.envAllow, ...(this.config.envAllowList ?? [])],
      undefined,
    );
    Object.assign(env, spec.env ?? {});
    if (spec.homeVar) {
      const home = this.home(entry);
      this.geminiHomeReady ??= prepareGeminiHome(home, Boolean(env.GEMINI_API_KEY));
      await this.geminiHomeReady;
      env[spec.homeVar] = home;
    }
    const declared = this.config.declared.find((agent) => agent.command === entry.installation.path);
    const args = declared ? declared.args : [...spec.args];
    if (resolved.endsWith('.js'))
      return throughNode(this.config, resolved, { args, cwd, env }, 'No absolute node interpreter');
    return { command: resolved, args, cwd, env };
  }
}

export function createAcpDriver(config: AcpDriverConfig): AgentDriver & { close(): Promise<void> } {
  return new AcpDriver(config);
}
