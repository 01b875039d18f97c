import { Injectable, Logger } from '@nestjs/common';
import { ACTIONS, result, type EdgeAgentResult } from '#contracts';
import type { DispatchOptions, EdgeDelivery, EdgeReply } from '../common/edge-rpc.client.js';
import { RouterPath } from '../edge-agent/router-path.service.js';
import { OperationLedgerRepository } from './operation-ledger.repository.js';
import { withoutEnvelope } from './operation-rules.js';
import type { Run } from './operation-run.js';

export interface Dispatched {
  reply: EdgeAgentResult;
  delivery: EdgeDelivery;
  /** The claim was gone when the edge was about to be asked: nothing was sent. */
  lostClaim: boolean;
}

/**
 * Asks the edge for an admitted run: the action's router path without the envelope, its one edge
 * call carrying the operation id and recording `dispatching` right before it is published.
 */
@Injectable()
export class OperationDispatcher {
  private readonly log = new Logger(OperationDispatcher.name);

  constructor(
    private readonly ledger: OperationLedgerRepository,
    private readonly path: RouterPath,
  ) {}

  async dispatch(run: Run): Promise<Dispatched> {
    let published = false;
    let lostClaim = false;
    const options: DispatchOptions = {
      // The edge runs one operation id once, even if this ledger is lost (dispatch-records.ts).
      dispatchId: run.id,
      beforePublish: async () => {
        published = await this.ledger.markDispatching(run.scope.session_id, run.id, run.claim);
        lostClaim = !published;
        return published;
      },
    };
    try {
      const { result: reply, delivery } = await this.route(run, options);
      return { reply, delivery, lostClaim };
    } catch (error) {
      this.log.error(`${run.action} of operation ${run.id} failed: ${(error as Error).message}`);
      return {
        reply: result('unavailable'),
        delivery: published ? 'unconfirmed' : 'not_delivered',
        lostClaim,
      };
    }
  }

  /** send goes through the stored-session windowing; every other action straight to the edge. */
  private route(run: Run, options: DispatchOptions): Promise<EdgeReply> {
    const request = withoutEnvelope(run.command.request);
    return ACTIONS[run.action].operation === 'send'
      ? this.path.send(run.command, request, options)
      : this.path.direct(run.command, request, options);
  }
}
