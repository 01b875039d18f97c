// The sessions this edge remembers, live or closed. A session is found by (owner, access,
// session) and any mismatch is `not_found` (reference §2.3, §5); closed saved sessions answer
// polls for a while, then only history has them.
import type { Logger } from '@nestjs/common';
import { Limits, type EdgeAgentRPCRequest, type SessionSummary } from '#contracts';
import { EdgeStatusError } from '../common/edge-errors.js';
import type { LiveSession } from './live-session.js';

export class SessionRegistry {
  private readonly sessions = new Map<string, LiveSession>();
  private readonly retention = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly log: Logger,
    /** How long a closed saved session stays in memory. */
    private readonly closedRetentionMs: number,
  ) {}

  get live(): number {
    let live = 0;
    for (const session of this.sessions.values()) if (!session.closed) live += 1;
    return live;
  }

  /** By id alone: for the checks that answer differently than `not_found` (resume, delete). */
  get(id: string): LiveSession | undefined {
    return this.sessions.get(id);
  }

  lookup(rpc: EdgeAgentRPCRequest): LiveSession {
    const session = this.sessions.get(rpc.request.session_id ?? '');
    if (!session || session.owner !== rpc.actor_id || session.access !== (rpc.request.access_id ?? '')) {
      throw new EdgeStatusError('not_found', 'No such session for this owner and access.');
    }
    return session;
  }

  /** Registers a launched session; `replaced` is the closed one of the same id it was checked against. */
  add(session: LiveSession, replaced: LiveSession | undefined): void {
    if (replaced) this.forget(replaced);
    this.makeRoom();
    this.sessions.set(session.id, session);
  }

  forget(session: LiveSession): void {
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    const timer = this.retention.get(session.id);
    if (timer) clearTimeout(timer);
    this.retention.delete(session.id);
  }

  /** A saved session closed: it answers polls until its retention ends. */
  retain(session: LiveSession): void {
    const timer = setTimeout(() => this.forget(session), this.closedRetentionMs);
    timer.unref();
    this.retention.set(session.id, timer);
  }

  /** Closes the session and waits for the agent; a failed native close shows as `unavailable`. */
  async close(session: LiveSession, status: 'session_closed' | 'expired'): Promise<void> {
    try {
      await session.close(status);
    } catch {
      this.log.warn(`Session ${session.id} did not close its agent cleanly.`);
      session.closeFailed();
    }
  }

  /** Closes every session (edge shutdown); their final states go to the publisher. */
  async shutdown(): Promise<void> {
    for (const timer of this.retention.values()) clearTimeout(timer);
    this.retention.clear();
    await Promise.allSettled(
      [...this.sessions.values()].map((session) => this.close(session, 'session_closed')),
    );
  }

  /** The owner's sessions under one access, most recently updated first. */
  list(owner: string, access: string): SessionSummary[] {
    return [...this.sessions.values()]
      .filter((session) => session.owner === owner && session.access === access)
      .sort((a, b) => b.updatedAt - a.updatedAt)
      .map((session) => ({
        session_id: session.id,
        thread_id: session.agent?.threadId,
        title: session.displayTitle(),
        project: session.cwd,
        updated_at: new Date(session.updatedAt).toISOString(),
        running: session.running,
        closed: session.closed,
        status: session.status,
      }));
  }

  /** Keeps at most EDGE_REMEMBERED_SESSIONS_MAX in memory by forgetting the oldest closed ones. */
  private makeRoom(): void {
    while (this.sessions.size >= Limits.EDGE_REMEMBERED_SESSIONS_MAX) {
      let oldest: LiveSession | undefined;
      for (const session of this.sessions.values()) {
        if (session.closed && (!oldest || session.updatedAt < oldest.updatedAt)) oldest = session;
      }
      if (!oldest) return;
      this.forget(oldest);
    }
  }
}
