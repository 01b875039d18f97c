// The Codex driver: discovers Codex installations and drives `codex app-server --listen stdio://`.
import { type AgentDriver, type AgentSession, type OpenSessionOptions } from '../agent-driver.js';
import {
  buildChildEnvironment,
  ChildProcessDriver,
  type ChildDriverConfig,
  type LaunchSpec,
} from '../child-launch.js';
import { CODEX_KIND, discoverCodex, installationId, resolveCodexFile } from './codex-discovery.js';
import { DEFAULT_ENV_ALLOW_LIST } from './codex-process.js';
import { CodexSession } from './codex-session.js';

export { DEFAULT_ENV_ALLOW_LIST } from './codex-process.js';
export { installationId } from './codex-discovery.js';
export { CodexSession } from './codex-session.js';

export interface CodexDriverConfig extends ChildDriverConfig {
  /** `TETHER_CODEX_PATH`: an explicit Codex binary or npm `codex.js`, looked at first. */
  codexPath?: string;
  /** `TETHER_CODEX_HOME`: CODEX_HOME for every launch; else the inherited CODEX_HOME, else Codex's `~/.codex`. */
  codexHome?: string;
  /**
   * The edge's own environment, as config.ts read it. Discovery reads PATH/HOME/NVM_DIR/FNM_DIR/
   * VOLTA_HOME/NPM_CONFIG_PREFIX from it; launches inherit only the allow-listed names.
   */
  environment: Readonly<Record<string, string | undefined>>;
  /** `TETHER_CODEX_ENV_ALLOW` (comma list): names added to DEFAULT_ENV_ALLOW_LIST, e.g. a custom provider's `env_key`. */
  envAllowList?: readonly string[];
}

class CodexDriver extends ChildProcessDriver<CodexDriverConfig> {
  constructor(config: CodexDriverConfig) {
    super(config, {
      kind: CODEX_KIND,
      name: 'Codex',
      explicitPath: config.codexPath,
      discover: discoverCodex,
      resolve: resolveCodexFile,
      installationId,
    });
  }

  protected async launch(options: OpenSessionOptions): Promise<AgentSession> {
    return CodexSession.open({ spec: await this.launchSpec(options), options });
  }

  private async launchSpec(options: OpenSessionOptions): Promise<LaunchSpec> {
    const resolved = await this.resolvedInstallation(options);
    const codexHome = this.config.codexHome ?? this.config.environment.CODEX_HOME;
    const env = buildChildEnvironment(
      this.config.environment,
      [...DEFAULT_ENV_ALLOW_LIST, ...(this.config.envAllowList ?? [])],
      codexHome,
    );
    const args = ['app-server', '--listen', 'stdio://'];
    return this.command(resolved, { args, cwd: options.cwd, env });
  }
}

export function createCodexDriver(config: CodexDriverConfig): AgentDriver {
  return new CodexDriver(config);
}
