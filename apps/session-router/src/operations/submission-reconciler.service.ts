import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  EDGE_AGENT_RPC_VERSION,
  Limits,
  result,
  type EdgeAgentResult,
  type OpenSubmission,
  type OpenSubmissionPosition,
  type Submission,
} from '#contracts';
import { PeriodicWorker, recordSubmissionsSettled, type PeriodicTaskOptions } from '#telemetry';
import type { RouterConfig } from '../config.js';
import { EdgeRpcClient } from '../common/edge-rpc.client.js';
import { HistoryClient } from '../common/history.client.js';
import { ROUTER_CONFIG } from '../common/tokens.js';
import {
  JournalSequencerService,
  type SubmissionScope,
} from '../journal-sequencer/journal-sequencer.service.js';
import { OperationLedgerRepository } from './operation-ledger.repository.js';

/** Open submissions one round handles at most, per kind (pages of the history maximum). */
export const SUBMISSIONS_PER_ROUND = 1_000;
/** How long a sweep marker keeps a second round from journaling the same settlement again. */
const SWEEP_MARK_MS = 10 * 60_000;
/** The first round after a start: soon, so a restarted router settles what its death left. */
const FIRST_ROUND_DELAY_MS = 1_000;

/** Why a `pending` submission became `unknown` without an answer (reference orca §4 attach). */
export const RESTART_REASON = 'router_restarted_before_acknowledgement';
/** The reason an `accepted` or `rejected` settlement learned from the edge's record carries. */
export const RECONCILED_REASON = 'reconciled_from_edge_record';

export interface RoundReport {
  swept: number;
  accepted: number;
  rejected: number;
  /** Unknown submissions whose edge was asked and had no record (or could not be reached). */
  stillUnknown: number;
}

/**
 * The crash boundary of sends (reference orca §4 "Crash-boundary reconciliation", §9.4):
 *
 * - **Sweep.** A submission history still shows `pending` long after any live run of it could
 *   have settled it (`submissionSweepAfterMs`) was left by a replica that died between its
 *   write-ahead row and its settlement row. It becomes `unknown` with reason
 *   `router_restarted_before_acknowledgement`, in the journal and in the ledger. Never re-sent.
 * - **Reconcile.** For each `unknown` submission within the ledger's retention, the session's edge
 *   is asked what became of the dispatch id (`dispatch_status`). Only the edge's own record, a
 *   strong match by the client's id, settles it: `accepted` (with the message it made) or
 *   `rejected` (its first-hand refusal). `absent`, an offline edge or any failure leaves it
 *   `unknown`; absence is not proof. Asked again after `submissionReconcileBackoffMs`.
 *
 * Every replica runs the timer; a round lock lets one replica work per interval, and per
 * submission markers keep two rounds from journaling one settlement twice (a duplicate row would
 * be harmless to the reducer, which never reopens a settled answer, but it is noise).
 */
@Injectable()
export class SubmissionReconciler extends PeriodicWorker {
  private readonly log = new Logger(SubmissionReconciler.name);

  constructor(
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    private readonly history: HistoryClient,
    private readonly edge: EdgeRpcClient,
    private readonly ledger: OperationLedgerRepository,
    private readonly journal: JournalSequencerService,
  ) {
    super();
  }

  protected schedule(): PeriodicTaskOptions {
    return {
      name: 'router.submission-sweep',
      intervalMs: this.config.submissionSweepIntervalMs,
      firstDelayMs: FIRST_ROUND_DELAY_MS,
    };
  }

  protected async tick(): Promise<void> {
    try {
      if (!(await this.ledger.holdRound(this.config.submissionSweepIntervalMs))) return;
      const report = await this.round();
      recordSubmissionsSettled(report.swept, 'swept_unknown');
      recordSubmissionsSettled(report.accepted, 'reconciled_accepted');
      recordSubmissionsSettled(report.rejected, 'reconciled_rejected');
      if (report.swept + report.accepted + report.rejected > 0) {
        this.log.log(
          `Submissions: ${report.swept} swept to unknown, ${report.accepted} accepted and ${report.rejected} rejected from edge records, ${report.stillUnknown} still unknown.`,
        );
      }
    } catch (error) {
      this.log.warn(`Submission round failed: ${(error as Error).message}`);
    }
  }

  /** One round: sweep, then reconcile. Public so tests and operators can run one on demand. */
  async round(now = Date.now()): Promise<RoundReport> {
    const report: RoundReport = { swept: 0, accepted: 0, rejected: 0, stillUnknown: 0 };
    for await (const open of this.open('pending', {
      submitted_before: now - this.config.submissionSweepAfterMs,
    })) {
      if (this.stopped) break;
      if (await this.isolated(open, 'sweep', () => this.sweep(open, now))) report.swept += 1;
    }
    // The ledger forgets an operation after its retention; after that nobody can replay it.
    const from = now - Limits.OPERATION_RETENTION_MS;
    for await (const open of this.open('unknown', { submitted_from: from })) {
      if (this.stopped) break;
      const outcome = await this.isolated(open, 'reconcile', () => this.reconcile(open));
      if (outcome) report[outcome] += 1;
    }
    return report;
  }

  /**
   * One submission's step; a failure (journal contended, Redis or history briefly away) gives its
   * marker back for the next round and never stops the others.
   */
  private async isolated<T>(
    open: OpenSubmission,
    purpose: 'sweep' | 'reconcile',
    step: () => Promise<T>,
  ): Promise<T | null> {
    const id = open.submission.client_message_id;
    try {
      return await step();
    } catch (error) {
      this.log.warn(
        `Submission ${id} of session ${open.session_id} not settled (${purpose}): ${(error as Error).message}`,
      );
      await this.ledger.unmark(open.session_id, id, purpose).catch(() => undefined);
      return null;
    }
  }

  /** Open submissions of one state, oldest first, bounded per round. */
  private async *open(
    state: 'pending' | 'unknown',
    window: { submitted_before?: number; submitted_from?: number },
  ): AsyncGenerator<OpenSubmission> {
    let after: OpenSubmissionPosition | undefined;
    for (let seen = 0; seen < SUBMISSIONS_PER_ROUND;) {
      const { submissions } = await this.history.call('historyOpenSubmissions', {
        dispatch_state: state,
        ...window,
        ...(after ? { after } : {}),
        limit: Limits.JOURNAL_PAGE_MAX_LIMIT,
      });
      for (const open of submissions) yield open;
      seen += submissions.length;
      const last = submissions.at(-1);
      if (!last || submissions.length < Limits.JOURNAL_PAGE_MAX_LIMIT) return;
      after = {
        submitted_at: last.submission.submitted_at,
        session_id: last.session_id,
        client_message_id: last.submission.client_message_id,
      };
    }
  }

  /** A pending submission nobody is running any more becomes `unknown`; true if journaled. */
  private async sweep(open: OpenSubmission, now: number): Promise<boolean> {
    const sessionId = open.session_id;
    const id = open.submission.client_message_id;
    if (!(await this.ledger.mark(sessionId, id, 'sweep', SWEEP_MARK_MS))) return false;
    const submission: Submission = {
      ...open.submission,
      dispatch_state: 'unknown',
      reason: RESTART_REASON,
      resolved_at: now,
    };
    const state = await this.ledger.sweep(sessionId, id, now, this.answer(open, submission));
    // A live run settles it itself (if its replica dies, a later round sweeps it); a settled
    // record means its settlement row is (or will be) in the journal, except an `unknown` whose
    // row could not be written: that one is journaled here.
    if (state === 'running') {
      await this.ledger.unmark(sessionId, id, 'sweep');
      return false;
    }
    if (state === 'succeeded' || state === 'failed') return false;
    await this.journal.appendSubmission(scope(open), open.submission.fence, submission);
    return true;
  }

  /** Asks the edge what became of an unknown send; settles it only on the edge's own record. */
  private async reconcile(open: OpenSubmission): Promise<'accepted' | 'rejected' | 'stillUnknown' | null> {
    const sessionId = open.session_id;
    const id = open.submission.client_message_id;
    if (!(await this.ledger.mark(sessionId, id, 'reconcile', this.config.submissionReconcileBackoffMs))) {
      return null;
    }
    const reply = await this.edge.ask({
      version: EDGE_AGENT_RPC_VERSION,
      actor_id: open.actor_id,
      request: {
        edge_id: open.edge_id,
        action: 'dispatch_status',
        session_id: sessionId,
        ...(open.access_id ? { access_id: open.access_id } : {}),
      },
      dispatch_id: id,
    });
    const record = reply.status === 'ok' ? reply.dispatch : undefined;
    if (!record || record.state === 'absent') return 'stillUnknown';
    const submission: Submission = {
      ...open.submission,
      dispatch_state: record.state,
      reason: record.state === 'accepted' ? RECONCILED_REASON : (record.status ?? RECONCILED_REASON),
      ...(record.state === 'accepted' && record.item_id ? { item_id: record.item_id } : {}),
      resolved_at: Date.now(),
    };
    await this.journal.appendSubmission(scope(open), open.submission.fence, submission);
    await this.ledger.resettle(
      sessionId,
      id,
      'unknown',
      record.state === 'accepted' ? 'succeeded' : 'failed',
      this.answer(open, submission, record.state === 'accepted' ? 'ok' : (record.status ?? 'unavailable')),
    );
    return record.state;
  }

  /** What a replay of the operation answers from now on. */
  private answer(
    open: OpenSubmission,
    submission: Submission,
    status: EdgeAgentResult['status'] = 'ok',
  ): EdgeAgentResult {
    return result(status, {
      session_id: open.session_id,
      operation: {
        client_operation_id: submission.client_message_id,
        replayed: false,
        fence: submission.fence,
        submission,
      },
    });
  }
}

function scope(open: OpenSubmission): SubmissionScope {
  return {
    session_id: open.session_id,
    edge_id: open.edge_id,
    actor_id: open.actor_id,
    ...(open.access_id ? { access_id: open.access_id } : {}),
  };
}
