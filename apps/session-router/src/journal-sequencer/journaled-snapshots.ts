import { Injectable } from '@nestjs/common';
import type { EdgeAgentResult, SessionUpdate } from '#contracts';

/** The newest edge state this replica journaled for a session, and whose it is. */
export interface JournaledSnapshot {
  revision: number;
  owner: string;
  /** '' for a session without a saved access (as the edge keeps it). */
  access: string;
  edge: string;
  snapshot: EdgeAgentResult;
}

interface Held {
  holders: number;
  newest?: JournaledSnapshot;
}

/**
 * The edge states this replica stored in the journal, kept only for sessions a local watch is
 * waiting on, and only until the last such watch answers. The edge sends its whole snapshot with
 * every update, so a watch woken by a revision this replica journaled can answer with that
 * snapshot instead of asking the edge again (watch.service.ts): one edge round trip fewer per
 * watch reply. Nothing is kept for a session nobody waits on, so memory is bounded by the
 * waiting watches (WATCH_WAITERS_MAX), not by the sessions.
 */
@Injectable()
export class JournaledSnapshots {
  private readonly held = new Map<string, Held>();

  /** Keeps what is journaled for `sessionId` until the returned release is called. */
  hold(sessionId: string): () => void {
    let entry = this.held.get(sessionId);
    if (!entry) {
      entry = { holders: 0 };
      this.held.set(sessionId, entry);
    }
    const held = entry;
    held.holders += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.holders -= 1;
      if (held.holders === 0 && this.held.get(sessionId) === held) this.held.delete(sessionId);
    };
  }

  /** An update the journal now holds; kept when someone holds its session and it is the newest. */
  offer(update: SessionUpdate): void {
    const held = this.held.get(update.session_id);
    if (!held || (held.newest && held.newest.revision >= update.revision)) return;
    held.newest = {
      revision: update.revision,
      owner: update.actor_id,
      access: update.access_id ?? '',
      edge: update.edge_id,
      snapshot: update.snapshot,
    };
  }

  /** The newest journaled state of a held session, when its revision is past `revision`. */
  newerThan(sessionId: string, revision: number): JournaledSnapshot | undefined {
    const newest = this.held.get(sessionId)?.newest;
    return newest && newest.revision > revision ? newest : undefined;
  }

  /** Sessions held now (for tests and diagnostics). */
  get size(): number {
    return this.held.size;
  }
}
