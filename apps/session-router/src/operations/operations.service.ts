import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  canonicalJson,
  Limits,
  operationFingerprint,
  result,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type OperationAction,
  type OperationOutcome,
  type OperationRefusal,
  type PromptResolution,
  type RouterEdgeAgentRequest,
  type Submission,
  sentMessageItemId,
} from '#contracts';
import type { RouterConfig } from '../config.js';
import { EdgeRpcClient, type Delivery, type DispatchObserver } from '../common/edge-rpc.client.js';
import { SESSION_ID_PATTERN } from '../common/limits.js';
import { ROUTER_CONFIG } from '../common/tokens.js';
import { JournalStream } from '../session-update/journal-stream.js';
import { SessionUpdateRepository } from '../session-update/session-update.repository.js';
import { SessionUpdateService, type SubmissionScope } from '../session-update/session-update.service.js';
import { OperationLedgerRepository, type OperationRecord } from './operation-ledger.repository.js';
import {
  asReplay,
  parseOperationId,
  recordableAnswer,
  refusalReply,
  retentionExpiry,
  settleDispatch,
  withoutEnvelope,
  type OperationContext,
} from './operation-rules.js';
import { PromptRepository, PROMPT_PENDING_REVISION } from './prompt.repository.js';

/** Backoff of a duplicate polling for the first call's settlement. */
const WAIT_FIRST_MS = 25;
const WAIT_MAX_MS = 200;

interface Dispatched {
  reply: EdgeAgentResult;
  delivery: Delivery | undefined;
  /** The claim was gone when the edge was about to be asked: nothing was sent. */
  lostClaim: boolean;
}

/** Stands in for a record that vanished between two reads (the replay loop then re-admits). */
const EMPTY_RECORD: OperationRecord = {
  fingerprint: '',
  state: 'pending',
  claim: '',
  claimUntil: 0,
  dispatching: false,
  fence: 0,
  recordedAt: 0,
};

/** A submission's fields without the previous settlement's (a resend settles afresh). */
function withoutSettlement(submission: Submission): Submission {
  const { reason: _reason, item_id: _item, resolved_at: _resolved, ...rest } = submission;
  return rest;
}

/** The unchanged path of a request (lease renewal, stored sessions, edge call) without the envelope. */
export type Execute = (request: EdgeAgentRequest) => Promise<EdgeAgentResult>;

/** One admitted run: who asked for what, under which claim and fence. */
interface Run {
  command: RouterEdgeAgentRequest;
  action: OperationAction;
  id: string;
  fingerprint: string;
  scope: SubmissionScope;
  claim: string;
  fence: number;
  execute: Execute;
}

/**
 * Idempotent mutations (docs/architecture.md invariants 4 and 5; docs/contract.md "Idempotent
 * mutations"): the admission of a request that carries the envelope, its run under a ledger
 * claim, its settlement, and the replay of a settled (or orphaned) operation. Requests without
 * the envelope never come here.
 */
@Injectable()
export class OperationsService {
  private readonly log = new Logger(OperationsService.name);

  constructor(
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    private readonly ledger: OperationLedgerRepository,
    private readonly prompts: PromptRepository,
    private readonly sessions: SessionUpdateRepository,
    private readonly journal: SessionUpdateService,
    private readonly stream: JournalStream,
    private readonly edge: EdgeRpcClient,
  ) {}

  /** True when the request carries the envelope (the wire already checked its shape). */
  static applies(request: EdgeAgentRequest): boolean {
    return request.client_operation_id !== undefined && request.payload_fingerprint !== undefined;
  }

  async route(command: RouterEdgeAgentRequest, action: OperationAction, execute: Execute) {
    const { request } = command;
    const id = request.client_operation_id!;
    const fingerprint = request.payload_fingerprint!;
    const unfenced: OperationContext = { client_operation_id: id, fence: 0 };

    // (0) The session must be one the router journals, for this caller and edge.
    const scope = await this.sessionScope(command);
    if (!scope) {
      return refusalReply(unfenced, {
        code: 'agent_session_ownership_unknown',
        message: 'The router holds no session by that id for this caller.',
      });
    }
    const sessionId = scope.session_id;
    const fence = await this.journal.runtimeFence(sessionId);
    const context: OperationContext = { client_operation_id: id, fence };

    // (1) The fingerprint before anything is written: a refused call leaves no record.
    if (operationFingerprint(action, request) !== fingerprint) {
      return refusalReply(
        context,
        {
          code: 'agent_session_operation_conflict',
          message: 'payload_fingerprint does not match the request.',
        },
        sessionId,
      );
    }
    const now = Date.now();
    const parsed = parseOperationId(id, now);
    if (!parsed.ok) {
      return refusalReply(
        context,
        { code: 'agent_session_operation_invalid', message: parsed.reason },
        sessionId,
      );
    }

    // (2) One atomic admission; (3) a replay is answered before the fence is looked at.
    const admission = await this.ledger.admit({
      sessionId,
      operationId: id,
      fingerprint,
      timestamp: parsed.timestamp,
      now,
      expiresAt: retentionExpiry(parsed.timestamp, now),
      expectedFence: request.expected_runtime_fence,
      claimMs: this.config.operationClaimMs,
      capacity: this.config.operationsPerSessionMax,
      maxNewAgeMs: Limits.OPERATION_MAX_NEW_AGE_MS,
    });
    const run = (claim: string, runFence: number): Run => ({
      command,
      action,
      id,
      fingerprint,
      scope,
      claim,
      fence: runFence,
      execute,
    });
    switch (admission.kind) {
      case 'admit':
        return this.run(run(admission.claim, admission.fence));
      case 'replay':
        return this.replay(run('', fence), admission.record);
      case 'conflict':
        return refusalReply(
          context,
          {
            code: 'agent_session_operation_conflict',
            message: 'client_operation_id was used with another payload.',
          },
          sessionId,
        );
      case 'expired':
        return refusalReply(
          context,
          {
            code: 'agent_session_operation_expired',
            message: 'client_operation_id is older than the ledger keeps; only the journal can tell.',
          },
          sessionId,
        );
      case 'capacity':
        return refusalReply(
          context,
          {
            code: 'agent_session_operation_capacity',
            message: 'Too many live operations on this session; retry later.',
          },
          sessionId,
        );
      case 'stale':
        return this.staleFence(id, admission.fence, sessionId);
    }
  }

  /** `start` and `resume` (re)start a runtime: the fence the envelope compares with moves. */
  async noteRuntime(command: RouterEdgeAgentRequest, reply: EdgeAgentResult): Promise<void> {
    const { request } = command;
    if (reply.status !== 'ok') return;
    try {
      if (request.action === 'start' && reply.session_id) {
        const scope: SubmissionScope = {
          session_id: reply.session_id,
          edge_id: request.edge_id,
          actor_id: command.actor_id,
          ...(request.access_id ? { access_id: request.access_id } : {}),
        };
        await this.journal.runtimeStarted(scope, reply);
      } else if (request.action === 'resume' && request.session_id) {
        await this.journal.runtimeRestarted(request.session_id);
      }
    } catch (error) {
      // The runtime did start; a fence that did not move only makes a stale client retry later,
      // and an unjournaled start is bound by the edge's own update shortly.
      this.log.warn(`Runtime of ${request.action} not recorded: ${(error as Error).message}`);
    }
  }

  private staleFence(id: string, current: number, sessionId: string): EdgeAgentResult {
    return refusalReply(
      { client_operation_id: id, fence: current },
      {
        code: 'agent_session_checkpoint_stale',
        message: 'expected_runtime_fence is not the session runtime fence.',
        current_fence: current,
      },
      sessionId,
    );
  }

  /**
   * The session as the router journals it: Redis meta, or (when Redis lost it) the journal's
   * last row. Another caller's or another edge's session is as unknown as a missing one.
   */
  private async sessionScope(command: RouterEdgeAgentRequest): Promise<SubmissionScope | null> {
    const { session_id: sessionId, edge_id: edgeId } = command.request;
    if (!sessionId || !SESSION_ID_PATTERN.test(sessionId)) return null;
    const state = await this.sessions.state(sessionId);
    let owner = state.owner;
    let edge = state.edge;
    let access = state.access;
    if (!owner || !edge) {
      const last = (await this.stream.last(sessionId))?.entry;
      if (!last) return null;
      owner = last.actor_id;
      edge = last.edge_id;
      access = last.access_id;
    }
    if (owner !== command.actor_id || edge !== edgeId) return null;
    return {
      session_id: sessionId,
      edge_id: edge,
      actor_id: owner,
      ...(access ? { access_id: access } : {}),
    };
  }

  /** The recorded outcome, after waiting (bounded) for a live first call, or taking over a dead one. */
  private async replay(base: Run, first: OperationRecord): Promise<EdgeAgentResult> {
    const sessionId = base.scope.session_id;
    const deadline = Date.now() + this.config.operationWaitMs;
    let record: OperationRecord | null = first;
    let pause = WAIT_FIRST_MS;
    for (;;) {
      if (!record) {
        // Dropped meanwhile (its run was refused before any effect): admit it afresh.
        return this.route(base.command, base.action, base.execute);
      }
      if (record.state === 'unknown' && base.action === 'send') return this.replayUnknownSend(base, record);
      if (record.state !== 'pending') return this.settledAnswer(base, record);
      const now = Date.now();
      if (record.claimUntil <= now) {
        const takeover = await this.ledger.takeover(
          sessionId,
          base.id,
          record,
          now,
          this.config.operationClaimMs,
          base.command.request.expected_runtime_fence,
        );
        if (takeover.kind === 'run')
          return this.run({ ...base, claim: takeover.claim, fence: takeover.fence });
        if (takeover.kind === 'settle') return this.settleOrphan({ ...base, claim: takeover.claim }, record);
        if (takeover.kind === 'stale') return this.staleFence(base.id, takeover.fence, sessionId);
      } else if (now >= deadline) {
        return refusalReply(
          { client_operation_id: base.id, fence: record.fence },
          {
            code: 'agent_session_operation_unknown',
            message: 'The first call with this client_operation_id is still running; retry the same id.',
          },
          sessionId,
        );
      } else {
        await new Promise((resolve) => setTimeout(resolve, Math.min(pause, deadline - now)));
        pause = Math.min(pause * 2, WAIT_MAX_MS);
      }
      record = await this.ledger.read(sessionId, base.id);
    }
  }

  private settledAnswer(base: Run, record: OperationRecord): EdgeAgentResult {
    if (record.answer) return asReplay(record.answer);
    return refusalReply(
      { client_operation_id: base.id, fence: record.fence },
      { code: 'agent_session_operation_unknown', message: 'The outcome is unknown; it is not run again.' },
      base.scope.session_id,
    );
  }

  /**
   * A send whose outcome is `unknown` (reference orca §3.5, §4 send): a plain retry replays it
   * (ok, the submission still `unknown`: never proof either way); the client's explicit
   * `retry_unknown` dispatches it again under a new claim, keeping its one submission. The edge
   * answers a dispatch id it already had with that first outcome, so this cannot make a second turn
   * while the edge still holds the record.
   */
  private async replayUnknownSend(base: Run, record: OperationRecord): Promise<EdgeAgentResult> {
    const sessionId = base.scope.session_id;
    const submission = record.answer?.operation?.submission;
    const request = base.command.request;
    if (!request.retry_unknown || submission?.dispatch_state !== 'unknown') {
      return this.settledAnswer(base, record);
    }
    const reopened = await this.ledger.reopen(
      sessionId,
      base.id,
      Date.now(),
      this.config.operationClaimMs,
      request.expected_runtime_fence,
    );
    if (reopened.kind === 'run') {
      return this.runSend({ ...base, claim: reopened.claim, fence: reopened.fence }, submission);
    }
    if (reopened.kind === 'stale') return this.staleFence(base.id, reopened.fence, sessionId);
    // Another retry reopened (or settled) it meanwhile: answer as its duplicate.
    const current = await this.ledger.read(sessionId, base.id);
    return this.replay(base, current ?? { ...EMPTY_RECORD, claimUntil: Date.now() + 1 });
  }

  private context(run: Run): OperationContext {
    return { client_operation_id: run.id, fence: run.fence };
  }

  private outcome(run: Run, extra: Partial<OperationOutcome> = {}): OperationOutcome {
    return { client_operation_id: run.id, replayed: false, fence: run.fence, ...extra };
  }

  private unknownRefusal(): OperationRefusal {
    return {
      code: 'agent_session_operation_unknown',
      message: 'The edge did not confirm the operation; its outcome is unknown and it is not run again.',
    };
  }

  /**
   * Runs the request's unchanged path without the envelope, watching the edge call of the
   * action itself: `dispatching` is recorded right before it is published.
   */
  private async dispatch(run: Run): Promise<Dispatched> {
    let published = false;
    let lostClaim = false;
    const observer: DispatchObserver = {
      action: run.action,
      // The edge runs one operation id once, even if this ledger is lost (dispatch-records.ts).
      dispatchId: run.id,
      beforePublish: async () => {
        published = await this.ledger.markDispatching(run.scope.session_id, run.id, run.claim);
        lostClaim = !published;
        return published;
      },
    };
    try {
      const reply = await this.edge.observe(observer, () =>
        run.execute(withoutEnvelope(run.command.request)),
      );
      return { reply, delivery: observer.delivery, lostClaim };
    } catch (error) {
      this.log.error(`${run.action} of operation ${run.id} failed: ${(error as Error).message}`);
      return {
        reply: result('unavailable'),
        delivery: published ? 'unconfirmed' : 'not_delivered',
        lostClaim,
      };
    }
  }

  /**
   * This run's claim expired before it asked the edge and another replica took the operation
   * over: that replica runs and settles it; this call answers as a duplicate would.
   */
  private async yieldTo(run: Run): Promise<EdgeAgentResult> {
    this.log.warn(`Operation ${run.id} was taken over before its dispatch; waiting for its settlement.`);
    const record = await this.ledger.read(run.scope.session_id, run.id);
    return this.replay(run, record ?? { ...EMPTY_RECORD, claimUntil: Date.now() + 1 });
  }

  private async run(run: Run): Promise<EdgeAgentResult> {
    switch (run.action) {
      case 'send':
        return this.runSend(run);
      case 'approve':
      case 'answer':
        return this.runPrompt(run);
      default:
        return this.runPlain(run);
    }
  }

  /** Records the answer; a lost claim (another replica settled it) answers what was recorded. */
  private async settle(
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

  /** interrupt, model, permissions: ok succeeds, a first-hand refusal fails, the rest is unknown. */
  private async runPlain(run: Run): Promise<EdgeAgentResult> {
    const { reply, delivery, lostClaim } = await this.dispatch(run);
    if (lostClaim) return this.yieldTo(run);
    if (reply.status === 'ok')
      return this.settle(run, 'succeeded', { ...reply, operation: this.outcome(run) });
    if (delivery === 'unconfirmed') {
      return this.settle(
        run,
        'unknown',
        refusalReply(this.context(run), this.unknownRefusal(), run.scope.session_id),
      );
    }
    return this.settle(run, 'failed', { ...reply, operation: this.outcome(run) });
  }

  /**
   * send: the submission row is journaled before the edge is asked, then its settlement row
   * (reference orca §4 send, §9.4). An unconfirmed dispatch is `unknown` and answers ok with that
   * submission: it is never re-sent for the user.
   */
  private async runSend(run: Run, resent?: Submission): Promise<EdgeAgentResult> {
    const sessionId = run.scope.session_id;
    // A resend (retry_unknown) settles the submission it already has: no second bubble.
    const pending: Submission = resent
      ? { ...resent, dispatch_state: 'pending' }
      : {
          client_message_id: run.id,
          fence: run.fence,
          payload_fingerprint: run.fingerprint,
          dispatch_state: 'pending',
          submitted_at: Date.now(),
        };
    try {
      if (!resent) await this.journal.appendSubmission(run.scope, run.fence, pending);
    } catch (error) {
      this.log.warn(
        `Submission ${run.id} of session ${sessionId} not journaled: ${(error as Error).message}`,
      );
      // Nothing happened: drop the record so an honest retry runs.
      await this.ledger.drop(sessionId, run.id, run.claim);
      return result('unavailable', { session_id: sessionId, operation: this.outcome(run) });
    }
    const dispatched = await this.dispatch(run);
    const { delivery, lostClaim } = dispatched;
    // The edge's dispatch record is the router's business, not the client's.
    const { dispatch: record, ...reply } = dispatched.reply;
    // The new claimant journals the settlement (the pending row is the same message).
    if (lostClaim) return this.yieldTo(run);
    if (resent && (delivery === undefined || delivery === 'not_delivered')) {
      // Refused before the edge had this copy (busy: maybe the first copy's own turn still runs;
      // or no edge listening). It proves nothing about the first dispatch: still unknown.
      return this.settle(run, 'unknown', {
        ...reply,
        session_id: sessionId,
        operation: this.outcome(run, { submission: resent }),
      });
    }
    const settlement = settleDispatch(reply, delivery);
    // An edge that had the dispatch already answers its record, naming the message it made then.
    const itemId =
      settlement.state === 'accepted' ? (record?.item_id ?? sentMessageItemId(reply)) : undefined;
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
      return this.settle(
        run,
        'unknown',
        result('ok', { session_id: sessionId, operation: this.outcome(run, { submission }) }),
      );
    }
    const operation = this.outcome(run, { submission });
    switch (settlement.state) {
      case 'accepted':
        return this.settle(run, 'succeeded', { ...reply, operation });
      case 'rejected':
        return this.settle(run, 'failed', { ...reply, operation });
      case 'unknown':
        return this.settle(run, 'unknown', result('ok', { session_id: sessionId, operation }));
    }
  }

  /**
   * approve, answer: the compare-and-set on the prompt is committed before the edge is asked. A
   * first-hand refusal (or an edge nobody listens for) undoes it; an unconfirmed delivery keeps
   * it and answers ok, as the reference keeps an answer its callback could not confirm.
   */
  private async runPrompt(run: Run): Promise<EdgeAgentResult> {
    const sessionId = run.scope.session_id;
    const request = run.command.request;
    const kind = run.action === 'approve' ? 'approval' : 'input';
    const promptId = (run.action === 'approve' ? request.approval_id : request.input_id) ?? '';
    if (!promptId) {
      return this.settle(
        run,
        'failed',
        refusalReply(
          this.context(run),
          { code: 'agent_session_operation_invalid', message: 'The prompt id is missing.' },
          sessionId,
        ),
      );
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
    if (claim.kind !== 'claimed') {
      const refusal: OperationRefusal = {
        code: claim.kind === 'stale' ? 'agent_session_item_revision_stale' : 'agent_session_already_resolved',
        message:
          claim.kind === 'stale'
            ? 'expected_revision is not the prompt revision; another answer may have won.'
            : 'The prompt is already resolved.',
        current_revision: claim.revision,
        resolution: claim.resolution,
      };
      return this.settle(run, 'failed', refusalReply(this.context(run), refusal, sessionId));
    }
    const resolution: PromptResolution = claim.resolution;
    const { reply, delivery, lostClaim } = await this.dispatch(run);
    // The answer stays: it is this operation's, and the new claimant carries it on.
    if (lostClaim) return this.yieldTo(run);
    if (reply.status === 'ok') {
      return this.settle(run, 'succeeded', { ...reply, operation: this.outcome(run, { resolution }) });
    }
    if (delivery === 'unconfirmed') {
      return this.settle(
        run,
        'succeeded',
        result('ok', { session_id: sessionId, operation: this.outcome(run, { resolution }) }),
      );
    }
    await this.prompts.rollback(sessionId, kind, promptId, run.id);
    return this.settle(run, 'failed', { ...reply, operation: this.outcome(run) });
  }

  /**
   * A pending operation whose replica died after the edge was (maybe) asked: never dispatched
   * again. A send gets its `unknown` settlement row; every action's record becomes `unknown`.
   */
  private async settleOrphan(run: Run, record: OperationRecord): Promise<EdgeAgentResult> {
    const sessionId = run.scope.session_id;
    const fenced: Run = { ...run, fence: record.fence };
    if (run.action !== 'send') {
      return asReplay(
        await this.settle(
          fenced,
          'unknown',
          refusalReply(this.context(fenced), this.unknownRefusal(), sessionId),
        ),
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
        result('ok', { session_id: sessionId, operation: this.outcome(fenced, { submission }) }),
      ),
    );
  }
}
