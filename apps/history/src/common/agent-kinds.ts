/**
 * Agent kinds an access may name: the drivers edges run (`codex`, `scripted`), `claude`, which
 * discovery already reports (reference §2.3 discover), and the installations of the ACP driver:
 * the known ACP agents and `acp` for one the edge owner declared (docs/agents.md).
 */
export const AGENT_KINDS = [
  'codex',
  'scripted',
  'claude',
  'acp',
  'gemini',
  'opencode',
  'claude-code-acp',
  'codex-acp',
] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

export function isAgentKind(kind: string): kind is AgentKind {
  return (AGENT_KINDS as readonly string[]).includes(kind);
}
