// The session's live state (running, approvals, questions, models, permissions, turn timing):
// what the journal does not carry. A `watch` long-poll loop (reference §2.3: it waits up to 15 s
// for the next revision) keeps it current; an offline edge answers from history (archived).
import type { EdgeAgentResult } from '../../../../libs/contracts/src/edge-agent.js';
import { agent, ApiError } from '../api.js';
import type { SessionScope } from './journal.js';

/** After a failure or an archived (offline) answer, wait before asking again. */
const RETRY_MS = 2_000;

export class LiveState {
  snapshot: EdgeAgentResult | null = null;
  notFound = false;
  error: string | null = null;
  private stopped = false;
  private wake?: () => void;

  constructor(
    private readonly scope: SessionScope,
    private readonly onChange: () => void,
  ) {}

  private get base() {
    return { edge_id: this.scope.edgeId, access_id: this.scope.accessId, session_id: this.scope.sessionId };
  }

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  /** A reply of an action (send, approve, ...) is a snapshot too: show it at once. */
  adopt(result: EdgeAgentResult): void {
    if (result.session_id && result.revision !== undefined) {
      if (!this.snapshot || (result.revision ?? 0) >= (this.snapshot.revision ?? 0) || result.archived) {
        this.snapshot = result;
        this.onChange();
      }
    }
  }

  /** Ask again now (after the edge came back, say). */
  refresh(): void {
    this.wake?.();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((done) => {
      const timer = setTimeout(done, ms);
      this.wake = () => {
        clearTimeout(timer);
        done();
      };
    });
  }

  private async loop(): Promise<void> {
    let first = true;
    while (!this.stopped) {
      const current = this.snapshot;
      const watching = !first && current && !current.archived && current.status === 'ok' && current.revision;
      try {
        const result = await agent(
          watching
            ? { ...this.base, action: 'watch', cursor: String(current.revision) }
            : { ...this.base, action: 'poll' },
        );
        first = false;
        this.error = null;
        if (result.status === 'ok' || result.status === 'session_closed' || result.session_id) {
          this.snapshot = result;
        } else {
          this.error = result.status;
        }
        this.onChange();
        if (result.archived || result.status !== 'ok') await this.pause(RETRY_MS);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) {
          this.notFound = true;
          this.onChange();
          return;
        }
        this.error = (error as Error).message;
        this.onChange();
        await this.pause(RETRY_MS);
      }
    }
  }
}
