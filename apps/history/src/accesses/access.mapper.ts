import type { AgentAccess } from '#contracts';
import type { StoredAccess } from './accesses.repository.js';

/** The wire form of a stored access (edge ids travel as decimal strings). */
export function toAgentAccess(access: StoredAccess): AgentAccess {
  return {
    id: access.id,
    name: access.name,
    kind: access.kind,
    edge_id: access.edgeId.toString(),
    installation_id: access.installationId,
    project: access.project,
  };
}
