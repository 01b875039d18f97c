// How a call from a driver to its agent fails, the same for every transport (Codex JSON-RPC,
// Claude Code control requests, ACP): the reason and the call's name, never the agent's own text.
import { DriverError } from './agent-driver.js';

export type AgentCallFailure = 'rejected' | 'closed' | 'timeout' | 'too_many_calls';

/** A call the agent refused, or that could not be made or answered; native text stays inside. */
export class AgentCallError extends Error {
  constructor(
    readonly reason: AgentCallFailure,
    /** The method (JSON-RPC, ACP) or control subtype (Claude Code) called. */
    readonly call: string,
    /** The agent's error code, when it gave one. */
    readonly code?: number,
  ) {
    super(`agent call ${call} failed: ${reason}`);
    this.name = 'AgentCallError';
  }
}

/** Any failure of a call, as a contract status: `what` names the call for the user. */
export function driverError(error: unknown, fallback: DriverError['status'], what: string): DriverError {
  if (error instanceof DriverError) return error;
  if (error instanceof AgentCallError) {
    switch (error.reason) {
      case 'closed':
        return new DriverError('session_closed', `The agent process ended during ${what}`);
      case 'timeout':
        return new DriverError('unavailable', `The agent did not answer ${what} in time`);
      case 'rejected':
        return new DriverError(fallback, `The agent rejected ${what}`);
      case 'too_many_calls':
        break;
    }
  }
  return new DriverError(fallback, `The agent failed ${what}`);
}
