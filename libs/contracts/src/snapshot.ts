import type { EdgeAgentResult } from './edge-agent.js';

/**
 * Snapshot fields that describe the live edge or the asking client, not the conversation:
 * catalogs, pending approvals and input requests, capability flags and the manager-side markers
 * (reference §4 "Save rules"). The journal and history never store them.
 */
export const LIVE_ONLY_FIELDS = [
  'models',
  'approvals',
  'input_requests',
  'permissions_available',
  'skills',
  'sessions',
  'directories',
  'history_persistent',
  'archived',
] as const satisfies readonly (keyof EdgeAgentResult)[];

/** A copy of the snapshot without its live-only fields. */
export function withoutLiveOnlyFields(snapshot: EdgeAgentResult): EdgeAgentResult {
  const copy: Partial<EdgeAgentResult> = { ...snapshot };
  for (const field of LIVE_ONLY_FIELDS) delete copy[field];
  return copy as EdgeAgentResult;
}
