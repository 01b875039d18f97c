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
  /** The revision each holder waits past. */
  cursors: number[];
  newest?: JournaledSnapshot;
}

/**
 * The edge states this replica stored in the journal, kept only for sessions a local watch is
 * waiting on, and only until the last such watch answers. The edge sends its whole snapshot with
 * every update, so a watch woken by a revision this replica journaled can answer with that
 * snapshot instead of asking the edge again (watch.service.ts): one edge round trip fewer per
 * watch reply. A state is kept only when it is past a holder's cursor, so every kept state wakes
 * a watch that answers and lets go of it within the watch's burst window: what this holds is
 * about the updates of the last few tens of milliseconds, never a snapshot per waiting watch.
 */
@Injectable()
export class JournaledSnapshots {
  private readonly held = new Map<string, Held>();

  /**
   * Keeps what is journaled for `sessionId` past `cursor` until the returned release is called.
   */
  hold(sessionId: string, cursor: number): () => void {
    let entry = this.held.get(sessionId);
    if (!entry) {
      entry = { cursors: [] };
      this.held.set(sessionId, entry);
    }
    const held = entry;
    held.cursors.push(cursor);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.cursors.splice(held.cursors.indexOf(cursor), 1);
      if (held.cursors.length === 0 && this.held.get(sessionId) === held) this.held.delete(sessionId);
    };
  }

  /** An update the journal now holds; kept when it is past a holder's cursor and the newest. */
  offer(update: SessionUpdate): void {
    const held = this.held.get(update.session_id);
    if (!held || (held.newest && held.newest.revision >= update.revision)) return;
    if (!held.cursors.some((cursor) => update.revision > cursor)) return;
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
