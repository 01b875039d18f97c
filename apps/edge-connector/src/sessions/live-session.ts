// One live session on this edge: how the driver's neutral events change its display state
// (reference §3 "Notification mapping", "Approvals", "Input requests", §6 timing). The state
// itself lives in the transcript window, the pending prompts and the turn state; every change
// goes through `changed()`, which bumps the revision, wakes watchers and tells the publisher.
import { Logger } from '@nestjs/common';
import { TurnTrace } from '#telemetry';
import type {
  AgentFile,
  AgentModel,
  AgentTurnTiming,
  EdgeAgentResult,
  EdgeAgentStatus,
  InputRequest,
  Installation,
  PermissionMode,
} from '#contracts';
import type { AgentEvent, AgentSession, ApprovalResponse, SkillInfo } from '../agent/agent-driver.js';
import { Mutex } from '../common/mutex.js';
import { randomId } from '../common/random.js';
import { ChangeWaiters } from './change-waiters.js';
import { answerLines, approvalView, inputQuestions, PendingPrompts } from './pending-prompts.js';
import { sessionSnapshot } from './session-snapshot.js';
import { SessionTitle, validTitle } from './session-title.js';
import type { RestoredDisplay } from './resume.js';
import { TranscriptWindow } from './transcript-window.js';
import { TurnState, type SessionClock } from './turn-state.js';

export interface SessionHooks {
  clock: SessionClock;
  /** Called after every revision bump. */
  changed(session: LiveSession): void;
  /** Called once, when the session closes for any reason. */
  closed(session: LiveSession): void;
}

export interface SessionSkill {
  id: string;
  info: SkillInfo;
}

export interface LiveSessionInit {
  id: string;
  owner: string;
  /** '' for a transient (preview) session. */
  access: string;
  installation: Installation;
  /** The resolved session directory (`project` in snapshots). */
  cwd: string;
  /** The resolved root file-change approvals must stay inside. */
  projectRoot: string;
}

type ApprovalEvent = Extract<AgentEvent, { type: 'approval_request' }>;
type InputEvent = Extract<AgentEvent, { type: 'input_request' }>;

export class LiveSession {
  private readonly log = new Logger(LiveSession.name);
  readonly id: string;
  readonly owner: string;
  readonly access: string;
  readonly installation: Installation;
  readonly cwd: string;
  readonly projectRoot: string;
  /** Send, discard, model, permissions and delete check-and-change under this lock. */
  readonly lock = new Mutex();
  readonly transcript: TranscriptWindow;
  readonly prompts = new PendingPrompts();

  agent: AgentSession | null = null;
  revision = 1;
  status: EdgeAgentStatus = 'ok';
  running = false;
  closed = false;
  /** `started_at`; a resumed session keeps its original one (see restore). */
  startedAt: number;
  updatedAt: number;
  permissionMode: PermissionMode = 'read-only';
  models: AgentModel[] | null = null;
  selectedModel: string | undefined;
  /** The model a resumed session's history named; shown until a turn picks one. */
  private restoredModel: string | undefined;
  skills: SessionSkill[] = [];
  skillsAvailable = false;

  private readonly title = new SessionTitle();
  private readonly turn: TurnState;
  private readonly waiters = new ChangeWaiters();

  constructor(
    init: LiveSessionInit,
    private readonly hooks: SessionHooks,
  ) {
    this.id = init.id;
    this.owner = init.owner;
    this.access = init.access;
    this.installation = init.installation;
    this.cwd = init.cwd;
    this.projectRoot = init.projectRoot;
    this.startedAt = hooks.clock.wall();
    this.updatedAt = this.startedAt;
    this.transcript = new TranscriptWindow(this.saved);
    this.turn = new TurnState(hooks.clock);
  }

  get saved(): boolean {
    return this.access !== '';
  }

  get isEmpty(): boolean {
    return this.transcript.isEmpty;
  }

  get shownModel(): string | undefined {
    return this.selectedModel ?? this.restoredModel ?? this.agent?.model;
  }

  /** Called once the driver opened the native session (revision stays 1). */
  attach(agent: AgentSession, skills: SessionSkill[] | null): void {
    this.agent = agent;
    this.title.setNative(agent.title);
    if (skills) {
      this.skills = skills;
      this.skillsAvailable = true;
    }
  }

  /**
   * Takes the display state of a resumed session from its history seed (reference §2.3 resume):
   * the revision continues right after the seed's, everything live (approvals, inputs, timing,
   * models, permission mode) starts empty. The seed was checked against the display bounds.
   */
  restore(seed: RestoredDisplay): void {
    this.revision = seed.revision + 1;
    if (seed.startedAt !== undefined) this.startedAt = seed.startedAt;
    this.title.freeze(validTitle(seed.title));
    this.restoredModel = seed.model;
    this.transcript.restore(seed.window, seed.truncated, seed.messages);
    this.transcript.activities.restore(seed.activities, this.transcript.messageCount);
  }

  // ---- revision and watchers ----

  changed(): void {
    this.revision += 1;
    this.updatedAt = this.hooks.clock.wall();
    this.waiters.wakeAll();
    this.turn.run(() => this.hooks.changed(this));
  }

  /** Resolves at the next revision bump, after `timeoutMs`, or when `signal` aborts. */
  waitForChange(timeoutMs: number, signal: AbortSignal): Promise<void> {
    return this.waiters.wait(timeoutMs, signal);
  }

  displayTitle(): string {
    return this.title.shown(this.transcript.firstPrompt());
  }

  rename(title: string): void {
    this.title.rename(title);
    this.changed();
  }

  snapshot(): EdgeAgentResult {
    return sessionSnapshot(this);
  }

  // ---- turns ----

  get currentTurnId(): string | undefined {
    return this.turn.currentId;
  }

  get turnTiming(): AgentTurnTiming | null {
    return this.turn.timing;
  }

  /** Window rollover once the current one's final state is journaled (reference §2.3 send step 5). */
  resetWindow(): void {
    this.title.freeze(this.displayTitle());
    this.transcript.rollOver();
  }

  /** Appends the prompt and an empty assistant reply, and starts the turn clock. */
  beginTurn(text: string, attachments?: AgentFile[]): void {
    // The user message keeps what was attached (metadata only, reference §2.3 send step 6).
    this.transcript.beginTurn(text, attachments);
    this.running = true;
    this.status = 'ok';
    const model = this.selectedModel ?? this.agent?.model;
    this.turn.begin(() => new TurnTrace(this.installation.kind, model, this.id));
    this.changed();
  }

  /** The native side accepted the turn. Ignored if the turn already ended meanwhile. */
  turnDispatched(turnId: string, timing: AgentTurnTiming | null): void {
    if (this.turn.dispatched(turnId, timing, this.running && !this.closed)) this.changed();
  }

  /** Events of another turn (an old one, or one we did not start) are ignored. */
  private acceptsTurn(turnId: string): boolean {
    return this.running && !this.closed && this.turn.accepts(turnId);
  }

  // ---- closing ----

  /**
   * Marks the session closed with `status`: pending approvals and inputs are dropped and running
   * activities end. Returns the native close, which the caller may await; idempotent.
   */
  close(status: EdgeAgentStatus): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.running = false;
    this.status = status;
    this.prompts.clear();
    this.transcript.activities.endRunning();
    this.turn.closed();
    this.changed();
    this.turn.endTrace('closed');
    this.hooks.closed(this);
    return this.agent ? this.agent.close() : Promise.resolve();
  }

  /** A close whose native part failed: the snapshot says so. */
  closeFailed(): void {
    this.status = 'unavailable';
    this.changed();
  }

  /** Closes the session after a failed native call, without waiting for the process. */
  fail(status: EdgeAgentStatus): void {
    this.close(status).catch(() => {
      this.log.warn(`Session ${this.id} did not close its agent cleanly.`);
    });
  }

  // ---- driver events ----

  apply(event: AgentEvent): void {
    try {
      this.applyEvent(event);
    } catch (error) {
      // A bug here must not leave a half-updated session running unseen.
      this.log.error(`Session ${this.id} failed to apply a ${event.type} event: ${(error as Error).message}`);
      this.fail('unavailable');
    }
  }

  private applyEvent(event: AgentEvent): void {
    if (this.closed) return;
    const activities = this.transcript.activities;
    switch (event.type) {
      case 'message_delta':
        if (this.acceptsTurn(event.turnId)) this.onMessageDelta(event.itemId, event.text);
        return;
      case 'activity':
        if (this.acceptsTurn(event.turnId) && activities.apply(event.activity)) this.changed();
        return;
      case 'output_delta':
      case 'plan_delta':
        if (this.acceptsTurn(event.turnId) && activities.appendOutput(event.nativeId, event.text))
          this.changed();
        return;
      case 'turn_diff':
        if (this.acceptsTurn(event.turnId) && activities.turnDiff(event.turnId, event.diff)) this.changed();
        return;
      case 'approval_request':
        this.onApprovalRequest(event);
        return;
      case 'input_request':
        this.onInputRequest(event);
        return;
      case 'request_resolved':
        this.onRequestResolved(event.nativeId);
        return;
      case 'title':
        if (this.title.setNative(event.title)) this.changed();
        return;
      case 'turn_completed':
        if (this.acceptsTurn(event.turnId)) this.onTurnCompleted(event.turnId, event.status);
        return;
      case 'closed':
        this.fail('session_closed');
        return;
    }
  }

  private onMessageDelta(itemId: string, text: string): void {
    if (!text) return;
    this.transcript.appendReply(itemId, text);
    this.turn.firstReply();
    this.changed();
  }

  private onTurnCompleted(turnId: string, status: 'completed' | 'failed' | 'interrupted'): void {
    this.turn.completed(turnId);
    this.running = false;
    this.prompts.clear();
    this.transcript.activities.endRunning();
    if (status === 'failed') this.status = 'turn_failed';
    this.changed();
    this.turn.endTrace(status);
  }

  // ---- approvals and input requests ----

  /** Refuses a native request nobody will see; a refusal that cannot be delivered closes the session. */
  private refuse(nativeId: string | number, kind: 'approval' | 'input'): void {
    this.status = 'approval_declined';
    this.changed();
    const delivered =
      kind === 'approval'
        ? this.agent?.respondApproval(nativeId, 'decline')
        : this.agent?.respondInput(nativeId, {});
    delivered?.catch(() => {
      const what = kind === 'approval' ? 'decline an approval request' : 'refuse an input request';
      this.log.warn(`Session ${this.id} could not ${what}; closing it.`);
      this.fail('unavailable');
    });
  }

  private onApprovalRequest(event: ApprovalEvent): void {
    if (this.prompts.hasApproval(event.nativeId)) return;
    const view =
      this.saved && this.acceptsTurn(event.turnId) && !this.prompts.approvalsFull
        ? approvalView(event, {
            cwd: this.cwd,
            projectRoot: this.projectRoot,
            changesOf: (itemId) => this.transcript.activities.completeChanges(itemId),
          })
        : undefined;
    if (!view || !this.prompts.addApproval(event.nativeId, event.turnId, view)) {
      this.refuse(event.nativeId, 'approval');
      return;
    }
    this.turn.waitStarted('approval', view.id);
    this.changed();
  }

  /** Takes a pending approval for `approve`: it is consumed before any I/O, so never replayed. */
  takeApproval(viewId: string): { nativeId: string | number; response?: ApprovalResponse } | undefined {
    const pending = this.prompts.approval(viewId);
    if (!pending || !this.running || !this.turn.matches(pending.turnId)) return undefined;
    this.prompts.take(viewId);
    this.turn.waitEnded(viewId);
    this.changed();
    return { nativeId: pending.nativeId };
  }

  private onInputRequest(event: InputEvent): void {
    if (this.prompts.hasInput(event.nativeId)) return;
    const questions = inputQuestions(event);
    if (!this.saved || !this.acceptsTurn(event.turnId) || !questions || this.prompts.inputsFull) {
      this.refuse(event.nativeId, 'input');
      return;
    }
    const view: InputRequest = { id: randomId(), questions, blocking: true };
    this.transcript.activities.inputAsked(
      event.itemId,
      questions.map((question) => question.question ?? '').join('\n'),
    );
    this.turn.waitStarted('input', view.id);
    this.prompts.addInput({
      nativeId: event.nativeId,
      turnId: event.turnId,
      activityNativeId: event.itemId,
      view,
    });
    this.changed();
  }

  pendingInput(viewId: string): InputRequest | undefined {
    const pending = this.prompts.input(viewId);
    if (!pending || !this.running || !this.turn.matches(pending.turnId)) return undefined;
    return pending.view;
  }

  /** Consumes a pending input (before I/O) and records "question → answer" with secrets hidden. */
  takeInput(viewId: string, answers: Map<string, string>): { nativeId: string | number } | undefined {
    const pending = this.prompts.input(viewId);
    if (!pending) return undefined;
    this.prompts.take(viewId);
    this.turn.waitEnded(viewId);
    this.transcript.activities.inputAnswered(pending.activityNativeId, answerLines(pending.view, answers));
    this.changed();
    return { nativeId: pending.nativeId };
  }

  private onRequestResolved(nativeId: string | number): void {
    const resolved = this.prompts.resolve(nativeId);
    if (!resolved) return;
    this.turn.waitEnded(resolved.viewId);
    if (resolved.kind === 'input') this.transcript.activities.inputDropped(resolved.pending.activityNativeId);
    this.changed();
  }
}
