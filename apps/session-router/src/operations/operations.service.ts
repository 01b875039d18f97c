import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  ACTIONS,
  Limits,
  operationFingerprint,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type OperationAction,
  type OperationRefusal,
  type RouterEdgeAgentRequest,
  type Submission,
} from '#contracts';
import type { RouterConfig } from '../config.js';
import { SESSION_ID_PATTERN } from '../common/limits.js';
import { ROUTER_CONFIG } from '../common/tokens.js';
import { JournalStream } from '../journal-sequencer/journal-stream.js';
import { JournalSequencerRepository } from '../journal-sequencer/journal-sequencer.repository.js';
import {
  JournalSequencerService,
  type SubmissionScope,
} from '../journal-sequencer/journal-sequencer.service.js';
import { ClaimRenewal, renewalIntervalMs } from './claim-renewal.js';
import { OperationLedgerRepository, type OperationRecord } from './operation-ledger.repository.js';
import {
  asReplay,
  parseOperationId,
  refusalReply,
  retentionExpiry,
  type OperationContext,
} from './operation-rules.js';
import { runContext, TAKEN_OVER, type Run, type RunAnswer } from './operation-run.js';
import { OperationSettlement } from './operation-settlement.js';
import { PlainOperation } from './plain-operation.js';
import { PromptOperation } from './prompt-operation.js';
import { SendOperation } from './send-operation.js';

/** Backoff of a duplicate polling for the first call's settlement. */
const WAIT_FIRST_MS = 25;
const WAIT_MAX_MS = 200;

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

/** The admission's refusals that carry no detail of their own. */
const REFUSALS = {
  fingerprint: {
    code: 'agent_session_operation_conflict',
    message: 'payload_fingerprint does not match the request.',
  },
  conflict: {
    code: 'agent_session_operation_conflict',
    message: 'client_operation_id was used with another payload.',
  },
  expired: {
    code: 'agent_session_operation_expired',
    message: 'client_operation_id is older than the ledger keeps; only the journal can tell.',
  },
  capacity: {
    code: 'agent_session_operation_capacity',
    message: 'Too many live operations on this session; retry later.',
  },
} as const satisfies Record<string, OperationRefusal>;

/**
 * Idempotent mutations (docs/architecture.md invariants 4 and 5; docs/contract.md "Idempotent
 * mutations"): the admission of a request that carries the envelope, its run under a ledger
 * claim (each action's own: SendOperation, PromptOperation, PlainOperation), and the replay of a
 * settled (or orphaned) operation. Requests without the envelope never come here.
 */
@Injectable()
export class OperationsService {
  private readonly log = new Logger(OperationsService.name);

  constructor(
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    private readonly ledger: OperationLedgerRepository,
    private readonly sessions: JournalSequencerRepository,
    private readonly journal: JournalSequencerService,
    private readonly stream: JournalStream,
    private readonly settlement: OperationSettlement,
    private readonly send: SendOperation,
    private readonly prompt: PromptOperation,
    private readonly plain: PlainOperation,
  ) {}

  /** True when the request carries the envelope (the wire already checked its shape). */
  static applies(request: EdgeAgentRequest): boolean {
    return request.client_operation_id !== undefined && request.payload_fingerprint !== undefined;
  }

  async route(command: RouterEdgeAgentRequest, action: OperationAction): Promise<EdgeAgentResult> {
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
      return refusalReply(context, REFUSALS.fingerprint, sessionId);
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
    const base: Run = { command, action, id, fingerprint, scope, claim: '', fence };
    return this.admit(base, parsed.timestamp, now);
  }

  /** (2) One atomic admission; (3) a replay is answered before the fence is looked at. */
  private async admit(base: Run, timestamp: number, now: number): Promise<EdgeAgentResult> {
    const sessionId = base.scope.session_id;
    const admission = await this.ledger.admit({
      sessionId,
      operationId: base.id,
      fingerprint: base.fingerprint,
      timestamp,
      now,
      expiresAt: retentionExpiry(timestamp, now),
      expectedFence: base.command.request.expected_runtime_fence,
      claimMs: this.config.operationClaimMs,
      capacity: this.config.operationsPerSessionMax,
      maxNewAgeMs: Limits.OPERATION_MAX_NEW_AGE_MS,
    });
    switch (admission.kind) {
      case 'admit':
        return this.run({ ...base, claim: admission.claim, fence: admission.fence });
      case 'replay':
        return this.replay(base, admission.record);
      case 'conflict':
      case 'expired':
      case 'capacity':
        return refusalReply(runContext(base), REFUSALS[admission.kind], sessionId);
      case 'stale':
        return this.staleFence(base.id, admission.fence, sessionId);
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
        return this.route(base.command, base.action);
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
        if (takeover.kind === 'settle')
          return this.settlement.settleOrphan({ ...base, claim: takeover.claim }, record);
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
      return this.run({ ...base, claim: reopened.claim, fence: reopened.fence }, submission);
    }
    if (reopened.kind === 'stale') return this.staleFence(base.id, reopened.fence, sessionId);
    // Another retry reopened (or settled) it meanwhile: answer as its duplicate.
    const current = await this.ledger.read(sessionId, base.id);
    return this.replay(base, current ?? { ...EMPTY_RECORD, claimUntil: Date.now() + 1 });
  }

  /**
   * Each action's run, its claim renewed while it lasts (claim-renewal.ts); a run whose claim was
   * taken over answers as that claimant's duplicate.
   */
  private async run(run: Run, resent?: Submission): Promise<EdgeAgentResult> {
    const claimMs = this.config.operationClaimMs;
    const renewal = new ClaimRenewal(
      () => this.ledger.renew(run.scope.session_id, run.id, run.claim, Date.now() + claimMs),
      renewalIntervalMs(claimMs),
      (error) => this.log.warn(`Claim of operation ${run.id} not renewed: ${(error as Error).message}`),
    );
    let answer: RunAnswer;
    try {
      answer = await this.runAction(run, resent);
    } finally {
      renewal.stop();
    }
    return answer === TAKEN_OVER ? this.yieldTo(run) : answer;
  }

  private runAction(run: Run, resent: Submission | undefined): Promise<RunAnswer> {
    switch (ACTIONS[run.action].operation) {
      case 'send':
        return this.send.run(run, resent);
      case 'prompt':
        return this.prompt.run(run);
      case 'plain':
        return this.plain.run(run);
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
}
