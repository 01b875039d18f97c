// Chooses the agent drivers from TETHER_AGENT. The Codex, Claude Code and ACP drivers are loaded
// only when asked for, so an edge that runs the scripted agent never loads them. Several real
// drivers share one edge through the composite driver.
import { Logger } from '@nestjs/common';
import type { AgentKind, EdgeConfig } from '../config.js';
import type { AgentDriver } from './agent-driver.js';
import { CompositeDriver } from './composite-driver.js';
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

async function createOne(kind: AgentKind, config: EdgeConfig): Promise<AgentDriver> {
  switch (kind) {
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

/** How the registry builds one driver; tests pass small fakes. */
export type DriverFactory = (kind: AgentKind, config: EdgeConfig) => Promise<AgentDriver>;

/**
 * One configured driver is returned as it is. Several make a composite in which a driver that
 * cannot load is logged once and left out, so the others still serve; only when none loads does
 * the edge refuse to start.
 */
export async function createAgentDriver(
  config: EdgeConfig,
  create: DriverFactory = createOne,
): Promise<AgentDriver> {
  if (config.agents.length === 1) return create(config.agents[0]!, config);
  const log = new Logger('AgentDrivers');
  const loaded: AgentDriver[] = [];
  const failures: string[] = [];
  for (const kind of config.agents) {
    try {
      loaded.push(await create(kind, config));
    } catch (error) {
      const why = `the ${kind} driver did not load: ${(error as Error).message}`;
      failures.push(why);
      log.warn(`${why[0]!.toUpperCase()}${why.slice(1)}; the edge runs without it.`);
    }
  }
  if (loaded.length === 0) {
    throw new Error(`TETHER_AGENT=${config.agents.join(',')}, but no driver loaded: ${failures.join('; ')}`);
  }
  return new CompositeDriver(loaded);
}
