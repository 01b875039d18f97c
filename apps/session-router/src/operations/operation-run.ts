// One admitted run of an operation and the answer shapes every action's run shares.
import type {
  EdgeAgentResult,
  OperationAction,
  OperationOutcome,
  OperationRefusal,
  RouterEdgeAgentRequest,
} from '#contracts';
import type { SubmissionScope } from '../journal-sequencer/journal-sequencer.service.js';
import type { OperationContext } from './operation-rules.js';

/** One admitted run: who asked for what, under which claim and fence. */
export interface Run {
  command: RouterEdgeAgentRequest;
  action: OperationAction;
  id: string;
  fingerprint: string;
  scope: SubmissionScope;
  claim: string;
  fence: number;
}

/**
 * This run's claim expired before it asked the edge and another replica took the operation over:
 * that replica runs and settles it, and this call answers as a duplicate would.
 */
export const TAKEN_OVER = 'taken_over';

/** What an action's run answers: its reply, or that another replica carries the operation on. */
export type RunAnswer = EdgeAgentResult | typeof TAKEN_OVER;

export function runContext(run: Run): OperationContext {
  return { client_operation_id: run.id, fence: run.fence };
}

export function runOutcome(run: Run, extra: Partial<OperationOutcome> = {}): OperationOutcome {
  return { client_operation_id: run.id, replayed: false, fence: run.fence, ...extra };
}

export function unknownRefusal(): OperationRefusal {
  return {
    code: 'agent_session_operation_unknown',
    message: 'The edge did not confirm the operation; its outcome is unknown and it is not run again.',
  };
}
