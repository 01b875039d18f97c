// The model catalog of a session and the choice from it (reference §2.3 models, model). Both
// need an idle session, and run under its lock so no turn starts with a half-changed model.
import type { EdgeAgentResult, EdgeAgentRPCRequest } from '#contracts';
import type { AgentSession } from '../agent/agent-driver.js';
import { MODELS_MAX } from '../agent/model-catalog.js';
import { EdgeStatusError } from '../common/edge-errors.js';
import type { LiveSession } from './live-session.js';
import type { ActionHandlers, SessionsContext } from './session-context.js';

function requireIdleModels(session: LiveSession): AgentSession {
  const agent = session.agent;
  if (!agent?.capabilities.models)
    throw new EdgeStatusError('upgrade_required', 'The agent has no model catalog.');
  if (session.closed || session.running) throw new EdgeStatusError('busy', 'The session is not idle.');
  return agent;
}

async function listModels(session: LiveSession): Promise<EdgeAgentResult> {
  const agent = requireIdleModels(session);
  let models;
  try {
    models = await agent.listModels();
  } catch {
    throw new EdgeStatusError(session.closed ? 'session_closed' : 'unavailable', 'The model catalog failed.');
  }
  if (session.closed) throw new EdgeStatusError('session_closed', 'The session closed.');
  if (models.length > MODELS_MAX) throw new EdgeStatusError('unavailable', 'The model catalog is too large.');
  session.models = models;
  session.changed();
  return session.snapshot();
}

/** Runs under the session lock, which turns its throws into rejections. */
function selectModel(session: LiveSession, rpc: EdgeAgentRPCRequest): EdgeAgentResult {
  requireIdleModels(session);
  const id = rpc.request.model ?? '';
  // Only ids from this session's own catalog: a client can never name an arbitrary model.
  if (!session.models?.some((model) => model.id === id)) {
    throw new EdgeStatusError('invalid_request', 'The model is not in this session catalog.');
  }
  if (session.selectedModel !== id) {
    session.selectedModel = id;
    session.changed();
  }
  return session.snapshot();
}

export function modelActions({ registry }: SessionsContext): ActionHandlers {
  return {
    models: (rpc) => {
      const session = registry.lookup(rpc);
      return session.lock.run(() => listModels(session));
    },
    model: (rpc) => {
      const session = registry.lookup(rpc);
      return session.lock.run(() => selectModel(session, rpc));
    },
  };
}
