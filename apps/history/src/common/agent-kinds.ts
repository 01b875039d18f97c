/**
 * Agent kinds an access may name: the drivers edges run (`codex`, `scripted`) and `claude`,
 * which discovery already reports (reference §2.3 discover).
 */
export const AGENT_KINDS = ['codex', 'scripted', 'claude'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

export function isAgentKind(kind: string): kind is AgentKind {
  return (AGENT_KINDS as readonly string[]).includes(kind);
}
