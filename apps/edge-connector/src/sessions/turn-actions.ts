// The turn actions (reference §2.3 send, interrupt, stop, expire): a send runs under the
// session's lock so its checks and the turn it begins cannot interleave with another change.
import { type EdgeAgentResult, type EdgeAgentRPCRequest } from '#contracts';
import { EdgeStatusError } from '../common/edge-errors.js';
import { promptWithAttachments, type PreparedAttachments } from '../files/attachments.js';
import type { LiveSession } from './live-session.js';
import { closeFailedTurn, type ActionHandlers, type SessionsContext } from './session-context.js';

/** The refusals of a send before anything changes (reference §2.3 send steps 2-5). */
function checkSend(rpc: EdgeAgentRPCRequest, session: LiveSession, attached?: PreparedAttachments): void {
  const request = rpc.request;
  if (request.skill_id) {
    const skill = session.skills.find((candidate) => candidate.id === request.skill_id);
    if (!skill || !session.agent?.capabilities.skills)
      throw new EdgeStatusError('invalid_request', 'Unknown skill.');
  }
  const text = request.text ?? '';
  if (!text.trim() && !attached) throw new EdgeStatusError('invalid_request', 'The prompt is blank.');
  if (session.running || session.closed || !session.agent)
    throw new EdgeStatusError('busy', 'The session is busy.');
  if (rpc.reset_revision && !session.saved)
    throw new EdgeStatusError('busy', 'Only saved sessions roll windows.');
}

/** How long a send waits for the router to journal this edge's last update of the window. */
export const RESET_JOURNAL_WAIT_MS = 2_000;

/**
 * Whether this send rolls the display window (reference §2.3 send step 5). Only the router asks
 * for it, with `reset_revision`: the last revision of the session it has journaled. History
 * archives the finished round from the journal, so the window rolls only when its final state is
 * there: that very revision, or a newer one the router has acknowledged to this edge (its update
 * may have been on its way while the router read the head). Anything else would lose what is
 * newer: `busy`. An empty window has nothing to archive and does not roll.
 */
async function rollsWindow(
  context: SessionsContext,
  rpc: EdgeAgentRPCRequest,
  session: LiveSession,
): Promise<boolean> {
  if (!rpc.reset_revision || session.isEmpty) return false;
  const revision = session.revision;
  if (revision === rpc.reset_revision) return true;
  if (
    revision > rpc.reset_revision &&
    (await context.journaled(session.id, revision, RESET_JOURNAL_WAIT_MS)) &&
    session.revision === revision
  ) {
    return true;
  }
  throw new EdgeStatusError('busy', 'The archived revision is stale.');
}

/**
 * The attachments of a send, prepared before its checks (refused ones are discarded again), and
 * whether it rolls the window.
 */
async function prepare(
  context: SessionsContext,
  rpc: EdgeAgentRPCRequest,
  session: LiveSession,
): Promise<{ attached: PreparedAttachments | undefined; roll: boolean }> {
  const { files } = context;
  let attached: PreparedAttachments | undefined;
  if ((rpc.request.attachments ?? []).length > 0) {
    if (!files || !session.agent?.capabilities.attachments)
      throw new EdgeStatusError('upgrade_required', 'This agent takes no attachments.');
    attached = await files.prepareAttachments(session, rpc.request.attachments ?? []);
  }
  try {
    checkSend(rpc, session, attached);
    return { attached, roll: await rollsWindow(context, rpc, session) };
  } catch (error) {
    await files?.attachments.discard(attached);
    throw error;
  }
}

async function sendLocked(
  context: SessionsContext,
  rpc: EdgeAgentRPCRequest,
  session: LiveSession,
): Promise<EdgeAgentResult> {
  const { log, files } = context;
  const request = rpc.request;
  // The session may have been discarded while this send waited for the lock.
  context.registry.lookup(rpc);
  const { attached, roll } = await prepare(context, rpc, session);
  const text = request.text ?? '';
  const skill = request.skill_id
    ? session.skills.find((candidate) => candidate.id === request.skill_id)
    : undefined;
  if (roll) session.resetWindow();
  session.beginTurn(text, attached?.files);
  recordAccepted(context, rpc, session);
  const timing = session.turnTiming;
  try {
    if (!session.agent) throw new EdgeStatusError('busy', 'The session has no agent.');
    const { turnId } = await session.agent.startTurn({
      text: attached ? promptWithAttachments(text, attached.paths) : text,
      permissionMode: session.permissionMode,
      model: session.selectedModel,
      skill: skill?.info,
      ...(attached && attached.images.length > 0 ? { images: attached.images } : {}),
    });
    session.turnDispatched(turnId, timing);
  } catch {
    log.warn(`Session ${session.id} failed to dispatch a turn; closing it.`);
    await closeFailedTurn(session);
  }
  // The previous turn's image snapshots are no longer needed by the agent. The turn has begun:
  // a failed clean-up must not turn the send into a refusal.
  try {
    await files?.attachments.turnStarted(session.id, attached);
  } catch (error) {
    log.warn(`Session ${session.id} kept old attachment snapshots: ${(error as Error).message}`);
  }
  return session.snapshot();
}

/**
 * An enveloped send is accepted once its message is in the session, before the prompt reaches
 * the agent: recorded (on disk, dispatch-record-log.ts) now, not when the send returns, so an
 * edge killed in between still knows after its restart that this dispatch ran, and the router's
 * `retry_unknown` of it is answered `accepted` instead of sending the message a second time.
 * DispatchOnce's own record of the outcome is then a no-op (the first outcome stands).
 */
function recordAccepted(context: SessionsContext, rpc: EdgeAgentRPCRequest, session: LiveSession): void {
  if (!rpc.dispatch_id) return;
  const itemId = session.transcript.lastPromptItemId();
  context.dispatches.record({
    owner: rpc.actor_id,
    session: session.id,
    id: rpc.dispatch_id,
    state: 'accepted',
    ...(itemId ? { itemId } : {}),
  });
}

async function interrupt(context: SessionsContext, rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
  const session = context.registry.lookup(rpc);
  const turnId = session.currentTurnId;
  // Before the native side named the turn there is nothing to interrupt yet (reference §9.11).
  if (session.running && turnId && session.agent) {
    try {
      await session.agent.interrupt(turnId);
    } catch {
      await closeFailedTurn(session);
    }
  }
  return session.snapshot();
}

/** Closes the session; a transient one is forgotten at once, a saved one stays for polls. */
async function closeAndAnswer(
  context: SessionsContext,
  session: LiveSession,
  status: 'session_closed' | 'expired',
): Promise<EdgeAgentResult> {
  await context.registry.close(session, status);
  const snapshot = session.snapshot();
  if (!session.saved) context.registry.forget(session);
  return snapshot;
}

export function turnActions(context: SessionsContext): ActionHandlers {
  const { registry } = context;
  return {
    send: (rpc) => {
      const session = registry.lookup(rpc);
      return session.lock.run(() => sendLocked(context, rpc, session));
    },
    interrupt: (rpc) => interrupt(context, rpc),
    stop: async (rpc) => closeAndAnswer(context, registry.lookup(rpc), 'session_closed'),
    // The router's lease reaper: idle sessions close with `expired`; a running turn is never cut.
    expire: async (rpc) => {
      const session = registry.lookup(rpc);
      if (session.running) throw new EdgeStatusError('busy', 'A turn is running.');
      // Closing is idempotent: an already closed session keeps its status.
      return closeAndAnswer(context, session, 'expired');
    },
  };
}
