import { Injectable } from '@nestjs/common';
import { OperationDispatcher } from './operation-dispatcher.js';
import { refusalReply } from './operation-rules.js';
import {
  runContext,
  runOutcome,
  TAKEN_OVER,
  unknownRefusal,
  type Run,
  type RunAnswer,
} from './operation-run.js';
import { OperationSettlement } from './operation-settlement.js';

/** interrupt, model, permissions: ok succeeds, a first-hand refusal fails, the rest is unknown. */
@Injectable()
export class PlainOperation {
  constructor(
    private readonly dispatcher: OperationDispatcher,
    private readonly settlement: OperationSettlement,
  ) {}

  async run(run: Run): Promise<RunAnswer> {
    const { reply, delivery, lostClaim } = await this.dispatcher.dispatch(run);
    if (lostClaim) return TAKEN_OVER;
    if (reply.status === 'ok') {
      return this.settlement.settle(run, 'succeeded', { ...reply, operation: runOutcome(run) });
    }
    if (delivery === 'unconfirmed') {
      return this.settlement.settle(
        run,
        'unknown',
        refusalReply(runContext(run), unknownRefusal(), run.scope.session_id),
      );
    }
    return this.settlement.settle(run, 'failed', { ...reply, operation: runOutcome(run) });
  }
}
