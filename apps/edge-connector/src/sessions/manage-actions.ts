// Session management (reference §2.3 rename, delete, discard). A delete forgets a closed session
// and its resume binding; a discard drops a session nobody used, so it leaves no trace.
import { result, type EdgeAgentResult, type EdgeAgentRPCRequest } from '#contracts';
import { EdgeStatusError } from '../common/edge-errors.js';
import type { ActionHandlers, SessionsContext } from './session-context.js';
import { validTitle } from './session-title.js';
import { settled } from '../common/settled.js';

/** Forgets a closed session and its binding; a binding alone (after a restart) goes too. */
async function remove(context: SessionsContext, rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
  const { registry, bindings } = context;
  const id = rpc.request.session_id ?? '';
  const access = rpc.request.access_id ?? '';
  const session = registry.get(id);
  if (!session || session.owner !== rpc.actor_id || session.access !== access) {
    if (access && (await bindings.remove(rpc.actor_id, access, id))) return result('ok');
    throw new EdgeStatusError('not_found', 'No such session for this owner and access.');
  }
  if (!session.closed) throw new EdgeStatusError('busy', 'Stop the session first.');
  if (session.saved) await bindings.remove(session.owner, session.access, session.id);
  registry.forget(session);
  return result('ok');
}

function discard(context: SessionsContext, rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
  const { registry, bindings } = context;
  const session = registry.lookup(rpc);
  return session.lock.run(async () => {
    registry.lookup(rpc);
    if (session.running || !session.isEmpty) throw new EdgeStatusError('busy', 'The session has content.');
    let status: 'ok' | 'unavailable' = 'ok';
    try {
      await session.close('session_closed');
    } catch {
      status = 'unavailable';
    }
    // An empty session has nothing to resume (Codex does not even keep an unused thread).
    if (session.saved) {
      await bindings.remove(session.owner, session.access, session.id).catch(() => {
        status = 'unavailable';
        return false;
      });
    }
    registry.forget(session);
    return result(status);
  });
}

export function manageActions(context: SessionsContext): ActionHandlers {
  return {
    rename: (rpc) =>
      settled(() => {
        const session = context.registry.lookup(rpc);
        const title = validTitle(rpc.request.title);
        if (!title) throw new EdgeStatusError('invalid_request', 'The title is not valid.');
        session.rename(title);
        return session.snapshot();
      }),
    delete: (rpc) => remove(context, rpc),
    discard: (rpc) => discard(context, rpc),
  };
}
