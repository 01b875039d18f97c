import type { VariableDocs } from '#config';

/** What the edge's own variables mean (docs/configuration.md is generated from this and config.ts). */
export const EDGE_VARIABLE_DOCS: VariableDocs = {
  TETHER_EDGE_ID: { meaning: 'Connector id returned by enrollment (a decimal uint64).' },
  TETHER_EDGE_TOKEN: {
    meaning:
      'Edge token returned by enrollment; in production one minted from a development `TETHER_EDGE_SECRET` is refused.',
  },
  TETHER_AGENT: {
    meaning:
      'Agent drivers: `scripted` (deterministic, for demos and tests; runs alone), or one or more of `codex`, `claude` and `acp` as a comma list (`codex,claude,acp`): one edge then discovers and drives them all.',
    default: '`scripted`',
  },
  TETHER_EDGE_DATA_DIR: {
    meaning: 'Where the edge keeps its own files (resume bindings, dispatch records).',
    default: '`~/.tether/edge`',
  },
  TETHER_SCRIPTED_SCRIPT: { meaning: 'JSON script of the scripted agent; a built-in one when unset.' },
  TETHER_EDGE_ALLOW_ROOT: {
    meaning: 'Agents refuse to run as root unless this is `1`/`true` (containers in CI).',
  },
  TETHER_CODEX_PATH: {
    meaning:
      'Codex binary (or npm `codex.js`) to use; otherwise found on `PATH`, `node_modules/.bin`, npm prefix, nvm/fnm/volta.',
  },
  TETHER_CODEX_HOME: {
    meaning: "`CODEX_HOME` given to Codex (its sign-in and settings); Codex's own `~/.codex` when unset.",
  },
  TETHER_CODEX_ENV_ALLOW: {
    meaning:
      "Comma-separated names added to the environment allow-list Codex sees (a custom provider's key, say).",
  },
  TETHER_METRICS_HOST: {
    meaning:
      "Address of the edge's ops endpoints; loopback, so an owner's machine exposes nothing by default.",
  },
  TETHER_EDGE_HEARTBEAT_MS: {
    meaning:
      'Heartbeat period; routers count the edge offline after 2 periods of silence. Longer saves messages on a large fleet, shorter notices a dead edge sooner (docs/reliability.md).',
  },
  TETHER_CLAUDE_PATH: {
    meaning:
      'Claude Code binary to use (`TETHER_AGENT=claude`); unset: found on PATH, in node_modules/.bin, the npm prefix and version-manager folders, without running anything.',
  },
  TETHER_CLAUDE_CONFIG_DIR: {
    meaning:
      "Claude Code's private state folder (CLAUDE_CONFIG_DIR: sign-in, conversations); default `<TETHER_EDGE_DATA_DIR>/claude`.",
  },
  TETHER_CLAUDE_ENV_ALLOW: {
    meaning: 'Comma-separated names of further environment variables Claude Code may inherit.',
  },
  TETHER_GEMINI_PATH: {
    meaning:
      'Gemini CLI to use with the ACP driver (`TETHER_AGENT=acp`); unset: discovered like the other agents.',
  },
  TETHER_ACP_HOME: {
    meaning:
      'Folder of the private agent homes of ACP agents (Gemini CLI uses `<folder>/gemini`); default `<TETHER_EDGE_DATA_DIR>/agent-homes`.',
  },
  TETHER_ACP_ENV_ALLOW: {
    meaning: 'Comma-separated names of further environment variables ACP agents may inherit.',
  },
  TETHER_ACP_AGENTS: {
    meaning:
      'ACP agents the edge owner declares beside the known ones, as JSON: `[{"name","command" (absolute path),"args","env"}]`, at most 8. Only this configuration can name a command line (docs/agents.md).',
  },
  TETHER_ACP_SPARES: {
    meaning:
      'Keep one started, initialized agent process per installation so `start` does not wait for the agent to boot.',
  },
};
