import { Injectable, Logger } from '@nestjs/common';
import { result, sentMessageItemId, type EdgeAgentResult, type Submission } from '#contracts';
import type { EdgeDelivery } from '../common/edge-rpc.client.js';
import { JournalSequencerService } from '../journal-sequencer/journal-sequencer.service.js';
import { OperationDispatcher } from './operation-dispatcher.js';
import { OperationLedgerRepository } from './operation-ledger.repository.js';
import { settleDispatch } from './operation-rules.js';
import { runOutcome, TAKEN_OVER, type Run, type RunAnswer } from './operation-run.js';
import { OperationSettlement } from './operation-settlement.js';

/** A submission's fields without the previous settlement's (a resend settles afresh). */
function withoutSettlement(submission: Submission): Submission {
  const { reason: _reason, item_id: _item, resolved_at: _resolved, ...rest } = submission;
  return rest;
}

/**
 * send: the submission row is journaled before the edge is asked, then its settlement row
 * (reference orca §4 send, §9.4). An unconfirmed dispatch is `unknown` and answers ok with that
 * submission: it is never re-sent for the user.
 */
@Injectable()
export class SendOperation {
  private readonly log = new Logger(SendOperation.name);

  constructor(
    private readonly ledger: OperationLedgerRepository,
    private readonly journal: JournalSequencerService,
    private readonly dispatcher: OperationDispatcher,
    private readonly settlement: OperationSettlement,
  ) {}

  /** `resent`: the submission a `retry_unknown` dispatches again (no second bubble). */
  async run(run: Run, resent?: Submission): Promise<RunAnswer> {
    const sessionId = run.scope.session_id;
    const pending: Submission = resent
      ? { ...resent, dispatch_state: 'pending' }
      : {
          client_message_id: run.id,
          fence: run.fence,
          payload_fingerprint: run.fingerprint,
          dispatch_state: 'pending',
          submitted_at: Date.now(),
        };
    if (!resent && !(await this.journalPending(run, pending))) {
      // Nothing happened and nothing is recorded (the ledger record was dropped): answered like
      // a router that never answered, without `operation`, so a client retries the same id
      // (docs/contract.md "Statuses"). An operation here would read as a recorded outcome.
      return result('unavailable', { session_id: sessionId });
    }
    const dispatched = await this.dispatcher.dispatch(run);
    const { delivery, lostClaim } = dispatched;
    // The edge's dispatch record is the router's business, not the client's.
    const { dispatch: record, ...reply } = dispatched.reply;
    // The new claimant journals the settlement (the pending row is the same message).
    if (lostClaim) return TAKEN_OVER;
    if (resent && delivery === 'not_delivered') {
      // Refused before the edge had this copy (busy: maybe the first copy's own turn still runs;
      // or no edge listening). It proves nothing about the first dispatch: still unknown.
      return this.settlement.settle(run, 'unknown', {
        ...reply,
        session_id: sessionId,
        operation: runOutcome(run, { submission: resent }),
      });
    }
    return this.settleSend(run, pending, reply, delivery, record?.item_id);
  }

  /** The pending row before the edge is asked; when it cannot be written, nothing happened. */
  private async journalPending(run: Run, pending: Submission): Promise<boolean> {
    try {
      await this.journal.appendSubmission(run.scope, run.fence, pending);
      return true;
    } catch (error) {
      this.log.warn(
        `Submission ${run.id} of session ${run.scope.session_id} not journaled: ${(error as Error).message}`,
      );
      // Drop the record so an honest retry runs.
      await this.ledger.drop(run.scope.session_id, run.id, run.claim);
      return false;
    }
  }

  /** The settlement row of the dispatch, then the ledger's record of it. */
  private async settleSend(
    run: Run,
    pending: Submission,
    reply: EdgeAgentResult,
    delivery: EdgeDelivery,
    recordedItemId: string | undefined,
  ): Promise<EdgeAgentResult> {
    const sessionId = run.scope.session_id;
    const settlement = settleDispatch(reply, delivery);
    // An edge that had the dispatch already answers its record, naming the message it made then.
    const itemId = settlement.state === 'accepted' ? (recordedItemId ?? sentMessageItemId(reply)) : undefined;
    let submission: Submission = {
      ...withoutSettlement(pending),
      dispatch_state: settlement.state,
      ...(settlement.reason ? { reason: settlement.reason } : {}),
      ...(itemId ? { item_id: itemId } : {}),
      resolved_at: Date.now(),
    };
    try {
      await this.journal.appendSubmission(run.scope, run.fence, submission);
    } catch (error) {
      // The dispatch happened, or may have, but its settlement is not durable: unknown.
      this.log.warn(
        `Settlement of ${run.id} in session ${sessionId} not journaled: ${(error as Error).message}`,
      );
      submission = {
        ...withoutSettlement(pending),
        dispatch_state: 'unknown',
        reason: 'journal_unavailable',
      };
      const operation = runOutcome(run, { submission });
      return this.settlement.settle(run, 'unknown', result('ok', { session_id: sessionId, operation }));
    }
    const operation = runOutcome(run, { submission });
    switch (settlement.state) {
      case 'accepted':
        return this.settlement.settle(run, 'succeeded', { ...reply, operation });
      case 'rejected':
        return this.settlement.settle(run, 'failed', { ...reply, operation });
      case 'unknown':
        return this.settlement.settle(run, 'unknown', result('ok', { session_id: sessionId, operation }));
    }
  }
}
