import { Injectable } from '@nestjs/common';
import {
  canonicalJson,
  result,
  type EdgeAgentResult,
  type OperationRefusal,
  type PromptResolution,
} from '#contracts';
import { OperationDispatcher } from './operation-dispatcher.js';
import { refusalReply } from './operation-rules.js';
import { runContext, runOutcome, TAKEN_OVER, type Run, type RunAnswer } from './operation-run.js';
import { OperationSettlement } from './operation-settlement.js';
import { PromptRepository, PROMPT_PENDING_REVISION } from './prompt.repository.js';

/**
 * The prompt this run answers, its answer committed (compare-and-set) before the edge is asked;
 * or the refusal the run settles as failed.
 */
type PromptClaim =
  | { claimed: true; kind: 'approval' | 'input'; promptId: string; resolution: PromptResolution }
  | { claimed: false; refusal: EdgeAgentResult };

/**
 * approve, answer: the compare-and-set on the prompt is committed before the edge is asked. A
 * first-hand refusal (or an edge nobody listens for) undoes it; an unconfirmed delivery keeps
 * it and answers ok, as the reference keeps an answer its callback could not confirm.
 */
@Injectable()
export class PromptOperation {
  constructor(
    private readonly prompts: PromptRepository,
    private readonly dispatcher: OperationDispatcher,
    private readonly settlement: OperationSettlement,
  ) {}

  async run(run: Run): Promise<RunAnswer> {
    const sessionId = run.scope.session_id;
    const claimed = await this.claim(run);
    if (!claimed.claimed) return this.settlement.settle(run, 'failed', claimed.refusal);
    const { kind, promptId, resolution } = claimed;
    const { reply, delivery, lostClaim } = await this.dispatcher.dispatch(run);
    // The answer stays: it is this operation's, and the new claimant carries it on.
    if (lostClaim) return TAKEN_OVER;
    if (reply.status === 'ok') {
      return this.settlement.settle(run, 'succeeded', {
        ...reply,
        operation: runOutcome(run, { resolution }),
      });
    }
    if (delivery === 'unconfirmed') {
      return this.settlement.settle(
        run,
        'succeeded',
        result('ok', { session_id: sessionId, operation: runOutcome(run, { resolution }) }),
      );
    }
    await this.prompts.rollback(sessionId, kind, promptId, run.id);
    return this.settlement.settle(run, 'failed', { ...reply, operation: runOutcome(run) });
  }

  private async claim(run: Run): Promise<PromptClaim> {
    const sessionId = run.scope.session_id;
    const request = run.command.request;
    const kind = run.action === 'approve' ? 'approval' : 'input';
    const promptId = (run.action === 'approve' ? request.approval_id : request.input_id) ?? '';
    if (!promptId) {
      const refusal = refusalReply(
        runContext(run),
        { code: 'agent_session_operation_invalid', message: 'The prompt id is missing.' },
        sessionId,
      );
      return { claimed: false, refusal };
    }
    const selected =
      run.action === 'approve' ? (request.decision ?? '') : canonicalJson(request.answers ?? []);
    const claim = await this.prompts.resolve({
      sessionId,
      kind,
      promptId,
      expectedRevision: request.expected_revision ?? PROMPT_PENDING_REVISION,
      operationId: run.id,
      selectedOptionId: selected,
      resolvedBy: run.command.actor_id,
      resolvedAt: Date.now(),
    });
    if (claim.kind === 'claimed') return { claimed: true, kind, promptId, resolution: claim.resolution };
    const refused: OperationRefusal = {
      code: claim.kind === 'stale' ? 'agent_session_item_revision_stale' : 'agent_session_already_resolved',
      message:
        claim.kind === 'stale'
          ? 'expected_revision is not the prompt revision; another answer may have won.'
          : 'The prompt is already resolved.',
      current_revision: claim.revision,
      resolution: claim.resolution,
    };
    return { claimed: false, refusal: refusalReply(runContext(run), refused, sessionId) };
  }
}
