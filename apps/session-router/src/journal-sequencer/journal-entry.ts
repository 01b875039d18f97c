import {
  withoutLiveOnlyFields,
  type EdgeAgentResult,
  type JournalEntry,
  type SessionUpdate,
} from '#contracts';

/** What the journal stores of a snapshot: the conversation, not the live edge's state. */
export function journalSnapshot(snapshot: EdgeAgentResult): EdgeAgentResult {
  return withoutLiveOnlyFields(snapshot);
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

/** The dedup key of a router-written submission row: one per send and dispatch state. */
export function submissionMsgId(
  sessionId: string,
  epoch: string,
  clientMessageId: string,
  dispatchState: string,
): string {
  return `${sessionId}:${epoch}:op:${clientMessageId}:${dispatchState}`;
}
