import type { EdgeAgentResult, JournalEntry, SessionUpdate } from '#contracts';

/**
 * Fields that describe the live edge, not the conversation: catalogs, pending approvals and input
 * requests, capability flags, and the manager-side markers (reference §4 "Save rules").
 */
const LIVE_ONLY_FIELDS = [
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

export function journalSnapshot(snapshot: EdgeAgentResult): EdgeAgentResult {
  const copy: Partial<EdgeAgentResult> = { ...snapshot };
  for (const field of LIVE_ONLY_FIELDS) delete copy[field];
  return copy as EdgeAgentResult;
}

export function journalEntry(update: SessionUpdate, epoch: string, recordedAt: number): JournalEntry {
  return {
    v: 1,
    session_id: update.session_id,
    edge_id: update.edge_id,
    actor_id: update.actor_id,
    ...(update.access_id ? { access_id: update.access_id } : {}),
    epoch,
    revision: update.revision,
    snapshot: journalSnapshot(update.snapshot),
    emitted_at: update.emitted_at,
    recorded_at: recordedAt,
  };
}

/** JetStream's dedup key: an edge retrying one update produces the same id. */
export function journalMsgId(sessionId: string, epoch: string, revision: number): string {
  return `${sessionId}:${epoch}:${revision}`;
}
