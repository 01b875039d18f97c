// Session lifecycle events (docs/events.md): the one internal message other services follow.

/**
 * The lifecycle event types (docs/events.md). `session.deleted` is not caused by a row: it carries
 * the session's journal head at deletion.
 */
export const LIFECYCLE_EVENT_TYPES = [
  'session.started',
  'turn.started',
  'turn.completed',
  'approval.requested',
  'approval.resolved',
  'session.expired',
  'session.closed',
  'session.deleted',
] as const;
export type LifecycleEventType = (typeof LIFECYCLE_EVENT_TYPES)[number];

/**
 * Per-type data of a lifecycle event: ids, statuses and timings only, never prompts, output,
 * titles or paths (other services may follow sessions without seeing their content).
 */
export interface LifecycleEventData {
  /** turn.completed, session.expired: the snapshot's status (`ok`, `turn_failed`, `expired`, ...). */
  status?: string;
  /** turn.completed: the edge's timing of the turn, when observed. */
  turn_timing?: {
    dispatch_ms?: number | null;
    first_reply_ms?: number | null;
    finished_ms?: number | null;
  };
  /** approval.requested, approval.resolved. */
  approval_id?: string;
  /** approval.requested: the approval's kind as the agent names it (e.g. `command`), when given. */
  approval_kind?: string;
}

/**
 * Stored in JetStream on `tether.session.<id>.lifecycle` (docs/events.md), version 1. Published by
 * the router after the journal row `(epoch, sequence)` that caused it is stored; `id` is also the
 * JetStream message id, so a retried update never stores an event twice.
 */
export interface LifecycleEvent {
  v: 1;
  id: string;
  type: LifecycleEventType;
  session_id: string;
  edge_id: string;
  actor_id: string;
  access_id?: string;
  /** Milliseconds since the epoch at which the router recorded the journal row. */
  at: number;
  epoch: string;
  sequence: number;
  data: LifecycleEventData;
}
