// The ACP agents the edge knows by name, and the shape of agents an edge owner declares in the
// edge's own configuration. Which agent runs is the edge owner's choice only: a request can name
// an installation id the edge discovered, never a command line.
import path from 'node:path';

export interface AcpAgentSpec {
  /** The installation kind reported to the control plane. */
  kind: string;
  /** File names looked for on PATH and in the other discovery folders. */
  names: readonly string[];
  /** Whether a resolved file (after symlinks) is this agent's entry point and not a wrapper. */
  accepts(resolved: string): boolean;
  args: readonly string[];
  /** Environment names the agent may inherit beside the common ones (its provider keys). */
  envAllow: readonly string[];
  /** Fixed variables for every launch. */
  env?: Readonly<Record<string, string>>;
  /** The variable that moves the agent's home into a private folder of the edge, when it has one. */
  homeVar?: string;
}

const inPackage = (resolved: string, pkg: string): boolean =>
  resolved.split(path.sep).join('/').includes(`/node_modules/${pkg}/`);

export const GEMINI: AcpAgentSpec = {
  kind: 'gemini',
  names: ['gemini'],
  // The npm bin links to the bundle (`@google/gemini-cli/bundle/gemini.js`).
  accepts: (resolved) =>
    path.basename(resolved) === 'gemini' ||
    (path.basename(resolved) === 'gemini.js' && inPackage(resolved, '@google/gemini-cli')),
  args: ['--acp'],
  envAllow: [
    'GEMINI_API_KEY',
    'GOOGLE_API_KEY',
    'GOOGLE_GEMINI_BASE_URL',
    'GOOGLE_GENAI_USE_VERTEXAI',
    'GOOGLE_CLOUD_PROJECT',
    'GOOGLE_CLOUD_LOCATION',
    'GOOGLE_APPLICATION_CREDENTIALS',
  ],
  // Without it the CLI re-spawns itself in a child node (+1.3 s per start, a second process).
  env: { GEMINI_CLI_NO_RELAUNCH: '1', NO_COLOR: '1' },
  homeVar: 'GEMINI_CLI_HOME',
};

export const KNOWN_AGENTS: readonly AcpAgentSpec[] = [
  GEMINI,
  {
    kind: 'opencode',
    names: ['opencode'],
    accepts: (resolved) => path.basename(resolved) === 'opencode' || inPackage(resolved, 'opencode-ai'),
    args: ['acp'],
    envAllow: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'GEMINI_API_KEY'],
  },
  {
    kind: 'claude-code-acp',
    names: ['claude-code-acp'],
    accepts: (resolved) =>
      path.basename(resolved) === 'claude-code-acp' || inPackage(resolved, '@zed-industries/claude-code-acp'),
    args: [],
    envAllow: ['ANTHROPIC_API_KEY', 'CLAUDE_CONFIG_DIR'],
  },
  {
    kind: 'codex-acp',
    names: ['codex-acp'],
    accepts: (resolved) =>
      path.basename(resolved).startsWith('codex-acp') || inPackage(resolved, '@zed-industries/codex-acp'),
    args: [],
    envAllow: ['OPENAI_API_KEY', 'CODEX_HOME'],
  },
];

/** The installation kind of every agent the edge owner declares. */
export const DECLARED_KIND = 'acp';

/** An agent from the edge's configuration (`TETHER_ACP_AGENTS`), already validated by config.ts. */
export interface DeclaredAgent {
  name: string;
  command: string;
  args: string[];
  env: string[];
}

export function declaredSpec(agent: DeclaredAgent): AcpAgentSpec {
  return {
    kind: DECLARED_KIND,
    names: [],
    accepts: () => true,
    args: agent.args,
    envAllow: agent.env,
  };
}
