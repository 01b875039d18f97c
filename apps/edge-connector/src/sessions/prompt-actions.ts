// The remote user's side of approvals, input requests and permission modes (reference §2.3
// approve, answer, permissions). They need a saved access and an agent that can ask.
import {
  APPROVAL_DECISIONS,
  PERMISSION_MODES,
  type ApprovalDecision,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
  type InputRequest,
  type PermissionMode,
} from '#contracts';
import { EdgeStatusError } from '../common/edge-errors.js';
import type { LiveSession } from './live-session.js';
import type { ActionHandlers, SessionsContext } from './session-context.js';

type GivenAnswers = NonNullable<EdgeAgentRPCRequest['request']['answers']>;

function requireInteractive(session: LiveSession, capability: 'approvals' | 'input' | 'permissions'): void {
  if (!session.saved || !session.agent?.capabilities[capability]) {
    throw new EdgeStatusError('upgrade_required', `${capability} need a saved access and a capable agent.`);
  }
}

/** Exactly one non-blank answer per question, one of its options unless it takes free text. */
export function checkAnswers(view: InputRequest, given: GivenAnswers): Map<string, string> {
  const questions = view.questions ?? [];
  if (given.length !== questions.length)
    throw new EdgeStatusError('invalid_request', 'Answer every question once.');
  const answers = new Map<string, string>();
  for (const item of given) {
    const question = questions.find((candidate) => candidate.id === item.question_id);
    const answer = item.answers[0];
    if (
      !question ||
      answers.has(item.question_id) ||
      item.answers.length !== 1 ||
      answer === undefined ||
      !answer.trim()
    ) {
      throw new EdgeStatusError('invalid_request', 'Each question takes exactly one answer.');
    }
    const options = question.options ?? [];
    if (options.length > 0 && !question.is_other && !options.some((option) => option.label === answer)) {
      throw new EdgeStatusError('invalid_request', 'The answer is not one of the options.');
    }
    answers.set(item.question_id, answer);
  }
  return answers;
}

async function approve(context: SessionsContext, rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
  const session = context.registry.lookup(rpc);
  requireInteractive(session, 'approvals');
  if (session.closed) throw new EdgeStatusError('session_closed', 'The session is closed.');
  const decision = rpc.request.decision ?? '';
  if (!(APPROVAL_DECISIONS as readonly string[]).includes(decision)) {
    throw new EdgeStatusError('invalid_request', 'Unknown decision.');
  }
  const taken = session.takeApproval(rpc.request.approval_id ?? '');
  if (!taken) throw new EdgeStatusError('invalid_request', 'No such pending approval for this turn.');
  try {
    await session.agent?.respondApproval(taken.nativeId, decision as ApprovalDecision);
  } catch {
    context.log.warn(`Session ${session.id} could not deliver an approval; closing it.`);
    session.fail('unavailable');
  }
  return session.snapshot();
}

async function answer(context: SessionsContext, rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
  const session = context.registry.lookup(rpc);
  requireInteractive(session, 'input');
  const inputId = rpc.request.input_id ?? '';
  const view = session.closed ? undefined : session.pendingInput(inputId);
  if (!view) throw new EdgeStatusError('invalid_request', 'No such pending input for this turn.');
  const answers = checkAnswers(view, rpc.request.answers ?? []);
  const taken = session.takeInput(inputId, answers);
  if (!taken) throw new EdgeStatusError('invalid_request', 'No such pending input.');
  const native: Record<string, string[]> = {};
  for (const [questionId, given] of answers) native[questionId] = [given];
  try {
    await session.agent?.respondInput(taken.nativeId, native);
  } catch {
    context.log.warn(`Session ${session.id} could not deliver an answer; closing it.`);
    session.fail('unavailable');
  }
  return session.snapshot();
}

function permissions(context: SessionsContext, rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
  const session = context.registry.lookup(rpc);
  return session.lock.run(() => {
    requireInteractive(session, 'permissions');
    if (session.closed) throw new EdgeStatusError('session_closed', 'The session is closed.');
    if (session.running) throw new EdgeStatusError('busy', 'A turn is running.');
    const mode = rpc.request.permission_mode ?? '';
    if (!(PERMISSION_MODES as readonly string[]).includes(mode)) {
      throw new EdgeStatusError('invalid_request', 'Unknown permission mode.');
    }
    if (session.permissionMode !== mode) {
      session.permissionMode = mode as PermissionMode;
      session.changed();
    }
    return session.snapshot();
  });
}

export function promptActions(context: SessionsContext): ActionHandlers {
  return {
    approve: (rpc) => approve(context, rpc),
    answer: (rpc) => answer(context, rpc),
    permissions: (rpc) => permissions(context, rpc),
  };
}
