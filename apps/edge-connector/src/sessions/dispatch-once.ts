// An enveloped mutation (the router names it with its operation id, `dispatch_id`) has one
// outcome however often it arrives: the first copy runs and its outcome is recorded; a copy that
// arrives meanwhile waits for it, and a later one answers the record instead of running again
// (no second turn, no second interrupt), even after the session is gone. This holds while the
// router's ledger is lost (Redis flushed) as long as this edge process lives (dispatch-records.ts).
import { result, sentMessageItemId, type EdgeAgentResult, type EdgeAgentRPCRequest } from '#contracts';
import { EdgeStatusError } from '../common/edge-errors.js';
import type { DispatchRecords, RecordedDispatch } from './dispatch-records.js';
import { toPublicStatus, type ActionHandlers } from './session-context.js';
import type { SessionRegistry } from './session-registry.js';
import { settled } from '../common/settled.js';

export class DispatchOnce {
  /** Enveloped mutations running now, by owner, session and dispatch id. */
  private readonly dispatching = new Map<string, Promise<EdgeAgentResult>>();

  constructor(
    private readonly dispatches: DispatchRecords,
    private readonly registry: SessionRegistry,
  ) {}

  async run(
    rpc: EdgeAgentRPCRequest,
    id: string,
    run: () => Promise<EdgeAgentResult>,
  ): Promise<EdgeAgentResult> {
    const owner = rpc.actor_id;
    const sessionId = rpc.request.session_id ?? '';
    const prior = this.dispatches.find(owner, sessionId, id);
    if (prior) return this.recordedAnswer(rpc, prior);
    const key = `${owner}\u0000${sessionId}\u0000${id}`;
    const running = this.dispatching.get(key);
    if (running) return running;
    const work = this.runAndRecord(rpc, id, run);
    this.dispatching.set(key, work);
    try {
      return await work;
    } finally {
      this.dispatching.delete(key);
    }
  }

  private async runAndRecord(
    rpc: EdgeAgentRPCRequest,
    id: string,
    run: () => Promise<EdgeAgentResult>,
  ): Promise<EdgeAgentResult> {
    const owner = rpc.actor_id;
    const session = rpc.request.session_id ?? '';
    let reply: EdgeAgentResult;
    try {
      reply = await run();
    } catch (error) {
      const status = toPublicStatus(error).status;
      // `not_found` says this process holds no such session (it restarted, say), nothing about
      // the dispatch, which an earlier process may have run. Recorded, it would answer
      // not_found for ever, even once the session is resumed, and tell the reconciler
      // `rejected` for a send that may have happened; unrecorded, it is `absent`, as after any restart.
      if (status !== 'not_found') this.dispatches.record({ owner, session, id, state: 'rejected', status });
      throw error;
    }
    const itemId = rpc.request.action === 'send' ? sentMessageItemId(reply) : undefined;
    this.dispatches.record({ owner, session, id, state: 'accepted', ...(itemId ? { itemId } : {}) });
    return reply;
  }

  /** A repeated dispatch id: its first outcome, with the session's state now (if it still has one). */
  private recordedAnswer(rpc: EdgeAgentRPCRequest, prior: RecordedDispatch): EdgeAgentResult {
    if (prior.state === 'rejected') {
      const status = prior.status && prior.status !== 'ok' ? prior.status : 'unavailable';
      throw new EdgeStatusError(status, 'This dispatch was refused before.');
    }
    const dispatch = this.dispatches.describe(prior.owner, prior.session, prior.id);
    let snapshot: EdgeAgentResult | undefined;
    try {
      snapshot = this.registry.lookup(rpc).snapshot();
    } catch {
      // Closed and forgotten since: the record still answers.
    }
    return snapshot ? { ...snapshot, dispatch } : result('ok', { session_id: prior.session, dispatch });
  }
}

/** The reconciler's question: what became of this dispatch id (`absent` proves nothing). */
export function dispatchActions(dispatches: DispatchRecords): ActionHandlers {
  return {
    dispatch_status: (rpc) =>
      settled(() => {
        const sessionId = rpc.request.session_id ?? '';
        const dispatch = dispatches.describe(rpc.actor_id, sessionId, rpc.dispatch_id ?? '');
        return result('ok', { session_id: sessionId, dispatch });
      }),
  };
}
