import { Injectable, Logger } from '@nestjs/common';
import { result, type EdgeAgentResult, type Submission } from '#contracts';
import { JournalSequencerService } from '../journal-sequencer/journal-sequencer.service.js';
import { OperationLedgerRepository, type OperationRecord } from './operation-ledger.repository.js';
import { asReplay, recordableAnswer, refusalReply } from './operation-rules.js';
import { runContext, runOutcome, unknownRefusal, type Run } from './operation-run.js';

/** How a run's record ends: its answer recorded once, replayed to every duplicate. */
@Injectable()
export class OperationSettlement {
  private readonly log = new Logger(OperationSettlement.name);

  constructor(
    private readonly ledger: OperationLedgerRepository,
    private readonly journal: JournalSequencerService,
  ) {}

  /** Records the answer; a lost claim (another replica settled it) answers what was recorded. */
  async settle(
    run: Run,
    state: 'succeeded' | 'failed' | 'unknown',
    answer: EdgeAgentResult,
  ): Promise<EdgeAgentResult> {
    const sessionId = run.scope.session_id;
    if (await this.ledger.settle(sessionId, run.id, run.claim, state, recordableAnswer(answer)))
      return answer;
    const record = await this.ledger.read(sessionId, run.id);
    this.log.warn(`Operation ${run.id} of session ${sessionId} was settled by another replica.`);
    return record && record.state !== 'pending' && record.answer ? record.answer : answer;
  }

  /**
   * A pending operation whose replica died after the edge was (maybe) asked: never dispatched
   * again. A send gets its `unknown` settlement row; every action's record becomes `unknown`.
   */
  async settleOrphan(run: Run, record: OperationRecord): Promise<EdgeAgentResult> {
    const sessionId = run.scope.session_id;
    const fenced: Run = { ...run, fence: record.fence };
    if (run.action !== 'send') {
      return asReplay(
        await this.settle(fenced, 'unknown', refusalReply(runContext(fenced), unknownRefusal(), sessionId)),
      );
    }
    const submission: Submission = {
      client_message_id: run.id,
      fence: record.fence,
      payload_fingerprint: run.fingerprint,
      dispatch_state: 'unknown',
      reason: 'router_lost_before_acknowledgement',
      submitted_at: record.recordedAt,
      resolved_at: Date.now(),
    };
    try {
      await this.journal.appendSubmission(run.scope, record.fence, submission);
    } catch (error) {
      this.log.warn(`Unknown settlement of ${run.id} not journaled: ${(error as Error).message}`);
    }
    return asReplay(
      await this.settle(
        fenced,
        'unknown',
        result('ok', { session_id: sessionId, operation: runOutcome(fenced, { submission }) }),
      ),
    );
  }
}
