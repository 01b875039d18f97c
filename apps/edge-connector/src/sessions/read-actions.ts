// The read actions: the session list, snapshots and the long-polling `watch` (reference §2.3).
import { Limits, result, type EdgeAgentResult, type EdgeAgentRPCRequest } from '#contracts';
import { EdgeStatusError } from '../common/edge-errors.js';
import type { ActionHandlers, SessionsContext } from './session-context.js';
import type { SessionRegistry } from './session-registry.js';
import { settled } from '../common/settled.js';

async function watch(
  registry: SessionRegistry,
  rpc: EdgeAgentRPCRequest,
  signal: AbortSignal,
): Promise<EdgeAgentResult> {
  const session = registry.lookup(rpc);
  if (rpc.request.cursor === String(session.revision) && !session.closed) {
    await session.waitForChange(Limits.WATCH_WAIT_MS, signal);
  }
  // A short pause after waking lets a burst of deltas land in one reply.
  await new Promise<void>((done) => {
    const timer = setTimeout(done, Limits.WATCH_COALESCE_MS);
    signal.addEventListener('abort', () => (clearTimeout(timer), done()), { once: true });
  });
  if (signal.aborted) throw new EdgeStatusError('unavailable', 'The watch was cancelled.');
  return registry.lookup(rpc).snapshot();
}

export function readActions({ registry }: SessionsContext): ActionHandlers {
  const snapshot = (rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> =>
    settled(() => registry.lookup(rpc).snapshot());
  return {
    sessions: (rpc) =>
      settled(() =>
        result('ok', {
          sessions: registry.list(rpc.actor_id, rpc.request.access_id ?? ''),
          sessions_available: true,
        }),
      ),
    poll: snapshot,
    snapshot,
    watch: (rpc, signal) => watch(registry, rpc, signal),
  };
}
