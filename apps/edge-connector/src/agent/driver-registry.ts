// Chooses the agent driver from TETHER_AGENT. The Codex and Claude Code drivers are loaded only
// when asked for, so an edge that runs the scripted agent never loads them.
import type { EdgeConfig } from '../config.js';
import type { AgentDriver } from './agent-driver.js';
import { ScriptedDriver, loadScript } from './scripted/index.js';

async function createCodexDriver(config: EdgeConfig): Promise<AgentDriver> {
  let codex: typeof import('./codex/index.js');
  try {
    codex = await import('./codex/index.js');
  } catch (error) {
    throw new Error(
      `TETHER_AGENT=codex, but the Codex driver (apps/edge-connector/src/agent/codex/index.ts) could not be loaded: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (typeof codex.createCodexDriver !== 'function') {
    throw new Error(
      'TETHER_AGENT=codex, but apps/edge-connector/src/agent/codex/index.ts does not export createCodexDriver(config).',
    );
  }
  return codex.createCodexDriver({
    codexPath: config.codex.codexPath,
    codexHome: config.codex.codexHome,
    envAllowList: config.codex.envAllowList,
    allowRoot: config.allowRoot,
    environment: config.environment,
  });
}

async function createClaudeDriver(config: EdgeConfig): Promise<AgentDriver> {
  let claude: typeof import('./claude/index.js');
  try {
    claude = await import('./claude/index.js');
  } catch (error) {
    throw new Error(
      `TETHER_AGENT=claude, but the Claude Code driver (apps/edge-connector/src/agent/claude/index.ts) could not be loaded: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return claude.createClaudeDriver({
    claudePath: config.claude.claudePath,
    stateDir: config.claude.stateDir,
    envAllowList: config.claude.envAllowList,
    allowRoot: config.allowRoot,
    environment: config.environment,
  });
}

async function createAcpDriver(config: EdgeConfig): Promise<AgentDriver> {
  let acp: typeof import('./acp/index.js');
  try {
    acp = await import('./acp/index.js');
  } catch (error) {
    throw new Error(
      `TETHER_AGENT=acp, but the ACP driver could not be loaded (is the optional @agentclientprotocol/sdk installed?): ${(error as Error).message}`,
      { cause: error },
    );
  }
  return acp.createAcpDriver({
    ...config.acp,
    allowRoot: config.allowRoot,
    environment: config.environment,
  });
}

export async function createAgentDriver(config: EdgeConfig): Promise<AgentDriver> {
  switch (config.agent) {
    case 'scripted':
      return new ScriptedDriver(await loadScript(config.scriptedScript));
    case 'codex':
      return createCodexDriver(config);
    case 'claude':
      return createClaudeDriver(config);
    case 'acp':
      return createAcpDriver(config);
  }
}
