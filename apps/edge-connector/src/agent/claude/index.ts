// The Claude Code driver: discovers installations of kind `claude` and drives each session with
// one `claude -p` process speaking stream-json both ways.
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import {
  DriverError,
  type AgentDriver,
  type AgentSession,
  type OpenSessionOptions,
} from '../agent-driver.js';
import {
  buildChildEnvironment,
  ChildProcessDriver,
  type ChildDriverConfig,
  type LaunchSpec,
  NODE_AGENT_ENV_ALLOW_LIST,
} from '../child-launch.js';
import { CLAUDE_KIND, claudeInstallationId, discoverClaude, resolveClaudeFile } from './claude-discovery.js';
import { ClaudeSession } from './claude-session.js';

export { CLAUDE_KIND, claudeInstallationId } from './claude-discovery.js';
export { ClaudeSession } from './claude-session.js';

/**
 * Variables a launch may inherit: the account basics, proxies and certificates, and the ways
 * Claude Code is given a key or a provider. Anything else must be allowed by the operator.
 */
export const CLAUDE_ENV_ALLOW_LIST: readonly string[] = [
  ...NODE_AGENT_ENV_ALLOW_LIST,
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_BASE_URL',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'CLAUDE_CODE_USE_BEDROCK',
  'CLAUDE_CODE_USE_VERTEX',
];

/**
 * Set on every launch: no update checks, telemetry, error reports or other non-essential traffic,
 * so the only network peer is the model provider.
 */
const QUIET_ENV: Readonly<Record<string, string>> = {
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
};

/**
 * The bidirectional mode the reference drives, with streamed text deltas; permissions default to
 * asking, MCP servers only from the (empty) command line, and settings only from the edge's own
 * state directory, so a project's settings cannot pre-approve commands or add hooks.
 */
const BASE_ARGS: readonly string[] = [
  '-p',
  '--input-format',
  'stream-json',
  '--output-format',
  'stream-json',
  '--verbose',
  '--permission-prompt-tool',
  'stdio',
  '--include-partial-messages',
  '--permission-mode',
  'default',
  '--strict-mcp-config',
  '--setting-sources',
  'user',
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface ClaudeDriverConfig extends ChildDriverConfig {
  /** `TETHER_CLAUDE_PATH`: an explicit Claude Code binary or npm `cli.js`, looked at first. */
  claudePath?: string;
  /** The edge's private Claude Code state (`CLAUDE_CONFIG_DIR`): sign-in, conversations. */
  stateDir: string;
  /** `TETHER_CLAUDE_ENV_ALLOW` (comma list): names added to CLAUDE_ENV_ALLOW_LIST. */
  envAllowList?: readonly string[];
}

class ClaudeDriver extends ChildProcessDriver<ClaudeDriverConfig> {
  constructor(config: ClaudeDriverConfig) {
    super(config, {
      kind: CLAUDE_KIND,
      name: 'Claude Code',
      explicitPath: config.claudePath,
      discover: discoverClaude,
      resolve: async (candidate) => (await resolveClaudeFile(candidate))?.path,
      installationId: claudeInstallationId,
    });
  }

  protected async launch(options: OpenSessionOptions): Promise<AgentSession> {
    // The binding file is edge state, but a resumed id still becomes an argument: only a UUID passes.
    if (options.threadId !== undefined && !UUID.test(options.threadId)) {
      throw new DriverError('resume_unavailable', 'The saved conversation id is not one Claude Code issues');
    }
    const sessionId = options.threadId ?? randomUUID();
    const spec = await this.launchSpec(options, sessionId);
    return ClaudeSession.open({ spec, options, sessionId });
  }

  private async launchSpec(options: OpenSessionOptions, sessionId: string): Promise<LaunchSpec> {
    const resolved = await this.resolvedInstallation(options);
    try {
      await mkdir(this.config.stateDir, { recursive: true, mode: 0o700 });
    } catch {
      throw new DriverError('launch_failed', 'The Claude Code state directory could not be created');
    }
    const env = {
      ...buildChildEnvironment(
        this.config.environment,
        [...CLAUDE_ENV_ALLOW_LIST, ...(this.config.envAllowList ?? [])],
        undefined,
      ),
      ...QUIET_ENV,
      CLAUDE_CONFIG_DIR: this.config.stateDir,
    };
    const args = [
      ...BASE_ARGS,
      ...(options.threadId ? ['--resume', sessionId] : ['--session-id', sessionId]),
    ];
    return this.command(resolved, { args, cwd: options.cwd, env });
  }
}

export function createClaudeDriver(config: ClaudeDriverConfig): AgentDriver {
  return new ClaudeDriver(config);
}
