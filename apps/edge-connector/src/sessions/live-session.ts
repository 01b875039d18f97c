// One live session on this edge: its display state, and how the driver's neutral events change
// it (reference §3 "Notification mapping", "Activity projection", "Approvals", "Input requests",
// §4 snapshot, §6 timing). Every change goes through `changed()`, which bumps the revision,
// wakes watchers and tells the update publisher.
import { existsSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import { TurnTrace } from '#telemetry';
import {
  Limits,
  type Activity,
  type AgentFile,
  type AgentModel,
  type AgentTurnTiming,
  type Approval,
  type EdgeAgentResult,
  type EdgeAgentStatus,
  type FileChange,
  type InputQuestion,
  type InputRequest,
  type Installation,
  type PermissionMode,
  EDGE_AGENT_RPC_VERSION,
} from '#contracts';
import type {
  AgentEvent,
  AgentSession,
  ApprovalResponse,
  NativeActivity,
  SkillInfo,
} from '../agent/agent-driver.js';
import { Mutex } from '../common/mutex.js';
import { hashId, randomId } from '../common/random.js';
import { hasControl, runeHead, runeLength, stripHidden, utf8Bytes, utf8Head } from '../common/utf8.js';
import { appendToMessage, boundSnapshot, displayMessage, type DisplayMessage } from './display.js';

/** Activity kinds a snapshot shows (reference §3); anything else (agent chatter) is dropped. */
const KEPT_ACTIVITY_KINDS: ReadonlySet<string> = new Set([
  'commandExecution',
  'fileChange',
  'webSearch',
  'mcpToolCall',
  'dynamicToolCall',
  'reasoning',
  'contextCompaction',
  'userInput',
  'turnDiff',
]);
/** Kinds whose command, output and diffs are shown, and only to saved-access sessions. */
const DETAIL_ACTIVITY_KINDS: ReadonlySet<string> = new Set([
  'commandExecution',
  'fileChange',
  'turnDiff',
  'userInput',
]);
const CHANGE_KINDS: ReadonlySet<string> = new Set(['add', 'delete', 'update']);
/** Native ids longer than this are refused (reference §3). */
const NATIVE_ID_MAX_CHARS = 256;
/** File changes shown per activity (reference §3). */
const CHANGES_MAX = 32;

/** Approval bounds (reference §3 "Approvals"). */
const APPROVALS_PENDING_MAX = 8;
const APPROVAL_COMMAND_MAX_CHARS = 16_384;
const APPROVAL_VIEWS_MAX_BYTES = 128 * 1024;
/** Input request bounds (reference §3 "Input requests"). */
const INPUTS_PENDING_MAX = 4;
const INPUT_ITEM_ID_MAX_CHARS = 256;
const INPUT_QUESTIONS_MAX = 3;
const INPUT_QUESTION_ID_MAX_CHARS = 128;
const INPUT_QUESTION_TEXT_MAX_CHARS = 4096;
const INPUT_HEADER_MAX_CHARS = 256;
const INPUT_OPTIONS_MAX = 8;
const INPUT_LABEL_MAX_CHARS = 512;
const INPUT_DESCRIPTION_MAX_CHARS = 2048;
/** What a secret answer shows as in the userInput activity. */
const HIDDEN_ANSWER = '[hidden]';

export interface SessionClock {
  /** Monotonic milliseconds (turn timing). */
  monotonic(): number;
  /** Wall clock, ms since the epoch (started_at, updated_at, emitted_at). */
  wall(): number;
}

export interface SessionHooks {
  clock: SessionClock;
  /** Called after every revision bump. */
  changed(session: LiveSession): void;
  /** Called once, when the session closes for any reason. */
  closed(session: LiveSession): void;
}

interface ActivityState {
  id: string;
  nativeId: string;
  kind: string;
  status: NativeActivity['status'];
  messageIndex: number;
  durationMs: number;
  command?: string;
  directory?: string;
  output?: string;
  exitCode?: number | null;
  changes?: FileChange[];
  truncated: boolean;
  detailBytes: number;
}

interface PendingApproval {
  nativeId: string | number;
  turnId: string;
  view: Approval;
}

interface PendingInput {
  nativeId: string | number;
  turnId: string;
  activityNativeId: string;
  view: InputRequest;
}

export interface SessionSkill {
  id: string;
  info: SkillInfo;
}

/** Activity statuses a seed may carry; anything else shows as ended. */
const RESTORED_STATUSES: ReadonlySet<string> = new Set([
  'running',
  'completed',
  'failed',
  'declined',
  'ended',
]);

/** The display state a resume seed carries (checked by sessions/resume.ts). */
export interface RestoredDisplay {
  revision: number;
  window: number;
  truncated: boolean;
  /** Wall-clock ms of the original `started_at`. */
  startedAt?: number;
  title?: string;
  model?: string;
  messages: { role: 'user' | 'assistant'; text: string; attachments?: AgentFile[] }[];
  activities: Activity[];
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

function elapsedSince(start: number, now: number): number {
  return Math.max(0, Math.round(now - start));
}

function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** A title a user or agent may set: not blank, ≤120 runes, no control characters. */
export function validTitle(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const title = raw.trim();
  if (!title || hasControl(title) || runeLength(title) > Limits.TITLE_MAX_RUNES) return undefined;
  return title;
}

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

  agent: AgentSession | null = null;
  revision = 1;
  window = 0;
  truncated = false;
  status: EdgeAgentStatus = 'ok';
  running = false;
  closed = false;
  /** `started_at`; a resumed session keeps its original one (see restore). */
  startedAt: number;
  updatedAt: number;

  private messages: DisplayMessage[] = [];
  private messageBytes = 0;
  private activities: ActivityState[] = [];
  private readonly approvals = new Map<string, PendingApproval>();
  private readonly inputs = new Map<string, PendingInput>();
  permissionMode: PermissionMode = 'read-only';
  models: AgentModel[] | null = null;
  selectedModel: string | undefined;
  /** The model a resumed session's history named; shown until a turn picks one. */
  private restoredModel: string | undefined;
  skills: SessionSkill[] = [];
  skillsAvailable = false;
  private nativeTitle: string | undefined;
  private userTitle: string | undefined;
  private frozenTitle: string | undefined;

  private turnId: string | undefined;
  private lastTurnId: string | undefined;
  private currentItemId: string | undefined;
  private turnStarted = 0;
  private timing: AgentTurnTiming | null = null;
  /** The running turn's span; its context is the parent of the updates the turn causes. */
  private turnTrace: TurnTrace | null = null;
  private waiters = new Set<() => void>();

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
  }

  get saved(): boolean {
    return this.access !== '';
  }

  get isEmpty(): boolean {
    return this.messages.length === 0 && this.activities.length === 0;
  }

  /** Called once the driver opened the native session (revision stays 1). */
  attach(agent: AgentSession, skills: SessionSkill[] | null): void {
    this.agent = agent;
    this.nativeTitle = validTitle(agent.title);
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
    this.window = seed.window;
    this.truncated = seed.truncated;
    if (seed.startedAt !== undefined) this.startedAt = seed.startedAt;
    this.frozenTitle = validTitle(seed.title);
    this.restoredModel = seed.model;
    for (const message of seed.messages) {
      this.pushMessage(message.role, message.text);
      if (message.attachments && message.attachments.length > 0) {
        (this.messages[this.messages.length - 1] as DisplayMessage).attachments = message.attachments;
      }
    }
    for (const view of seed.activities) {
      if (!KEPT_ACTIVITY_KINDS.has(view.kind) || this.activities.length >= Limits.ACTIVITIES_MAX) continue;
      const status = RESTORED_STATUSES.has(view.status ?? '')
        ? (view.status as NativeActivity['status'])
        : 'ended';
      const activity: ActivityState = {
        id: view.id,
        // Never matched by a native event: the old runtime that named it is gone.
        nativeId: `restored:${view.id}`,
        kind: view.kind,
        status: status === 'running' ? 'ended' : status,
        messageIndex: Math.max(0, Math.min(view.message_index ?? 0, this.messages.length - 1)),
        durationMs: Math.max(0, view.duration_ms ?? 0),
        truncated: view.truncated ?? false,
        detailBytes: 0,
      };
      if (this.showsDetails(activity)) {
        activity.command = view.command;
        activity.directory = view.directory;
        activity.output = view.output;
        if (view.exit_code !== undefined) activity.exitCode = view.exit_code;
        activity.changes = view.changes;
      }
      this.measureDetails(activity);
      this.activities.push(activity);
    }
  }

  // ---- revision and watchers ----

  changed(): void {
    this.revision += 1;
    this.updatedAt = this.hooks.clock.wall();
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
    if (this.turnTrace) this.turnTrace.run(() => this.hooks.changed(this));
    else this.hooks.changed(this);
  }

  /** Ends the turn's span with the final timing (metrics included); idempotent. */
  private endTurnTrace(status: string): void {
    this.turnTrace?.finished(this.timing, status);
    this.turnTrace = null;
  }

  /** Resolves at the next revision bump, after `timeoutMs`, or when `signal` aborts. */
  waitForChange(timeoutMs: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolveWait) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolveWait();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }

  // ---- title ----

  displayTitle(): string {
    if (this.userTitle) return this.userTitle;
    if (this.nativeTitle) return this.nativeTitle;
    if (this.frozenTitle) return this.frozenTitle;
    const first = this.messages.find((message) => message.role === 'user');
    if (!first) return '';
    const collapsed = first.text.replace(/\s+/g, ' ').trim();
    if (runeLength(collapsed) <= Limits.DISPLAY_TITLE_FALLBACK_RUNES) return collapsed;
    return `${runeHead(collapsed, Limits.DISPLAY_TITLE_FALLBACK_RUNES)}…`;
  }

  rename(title: string): void {
    this.userTitle = title;
    this.changed();
  }

  // ---- turns ----

  get currentTurnId(): string | undefined {
    return this.turnId;
  }

  /** Window rollover after the router archived the current one (reference §2.3 send step 5). */
  resetWindow(): void {
    this.frozenTitle = this.displayTitle();
    this.window += 1;
    this.messages = [];
    this.messageBytes = 0;
    this.activities = [];
    this.truncated = false;
  }

  /** Appends the prompt and an empty assistant reply, and starts the turn clock. */
  beginTurn(text: string, attachments?: AgentFile[]): void {
    this.pushMessage('user', text);
    // The user message keeps what was attached (metadata only, reference §2.3 send step 6).
    if (attachments && attachments.length > 0) {
      (this.messages[this.messages.length - 1] as DisplayMessage).attachments = attachments;
    }
    this.pushMessage('assistant', '');
    this.running = true;
    this.status = 'ok';
    this.turnId = undefined;
    this.currentItemId = undefined;
    this.turnStarted = this.hooks.clock.monotonic();
    this.timing = {};
    this.endTurnTrace('superseded');
    this.turnTrace = new TurnTrace(this.installation.kind, this.selectedModel ?? this.agent?.model, this.id);
    this.changed();
  }

  /** The native side accepted the turn. Ignored if the turn already ended meanwhile. */
  turnDispatched(turnId: string, timing: AgentTurnTiming | null): void {
    if (timing !== this.timing || !timing) return;
    timing.dispatch_ms ??= elapsedSince(this.turnStarted, this.hooks.clock.monotonic());
    this.turnTrace?.dispatched(timing.dispatch_ms);
    if (this.running && !this.closed && turnId !== this.lastTurnId) this.turnId = turnId;
    this.changed();
  }

  get turnTiming(): AgentTurnTiming | null {
    return this.timing;
  }

  /** Events of another turn (an old one, or one we did not start) are ignored. */
  private acceptsTurn(turnId: string): boolean {
    if (!this.running || this.closed) return false;
    if (this.turnId !== undefined) return turnId === this.turnId;
    return turnId !== this.lastTurnId;
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
    this.approvals.clear();
    this.inputs.clear();
    this.endRunningActivities();
    this.lastTurnId = this.turnId ?? this.lastTurnId;
    this.changed();
    this.endTurnTrace('closed');
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

  private endRunningActivities(): void {
    for (const activity of this.activities) {
      if (activity.status === 'running') activity.status = 'ended';
    }
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
    switch (event.type) {
      case 'message_delta':
        if (this.acceptsTurn(event.turnId)) this.onMessageDelta(event.itemId, event.text);
        return;
      case 'activity':
        if (this.acceptsTurn(event.turnId)) this.onActivity(event.activity);
        return;
      case 'output_delta':
      case 'plan_delta':
        if (this.acceptsTurn(event.turnId)) this.onOutputDelta(event.nativeId, event.text);
        return;
      case 'turn_diff':
        if (this.acceptsTurn(event.turnId)) this.onTurnDiff(event.turnId, event.diff);
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
      case 'title': {
        const title = validTitle(event.title);
        if (!title || title === this.nativeTitle) return;
        this.nativeTitle = title;
        if (!this.userTitle) this.changed();
        return;
      }
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
    const last = this.messages[this.messages.length - 1];
    if (this.currentItemId === undefined && last?.role === 'assistant' && last.text === '') {
      this.currentItemId = itemId;
    } else if (itemId !== this.currentItemId || last?.role !== 'assistant') {
      this.currentItemId = itemId;
      this.pushMessage('assistant', '');
    }
    const message = this.messages[this.messages.length - 1] as DisplayMessage;
    const before = message.bytes;
    if (appendToMessage(message, text)) this.truncated = true;
    this.messageBytes += message.bytes - before;
    this.enforceMessageBounds();
    if (this.timing && this.timing.first_reply_ms == null) {
      this.timing.first_reply_ms = elapsedSince(this.turnStarted, this.hooks.clock.monotonic());
      this.turnTrace?.firstReply(this.timing.first_reply_ms);
    }
    this.changed();
  }

  private onTurnCompleted(turnId: string, status: 'completed' | 'failed' | 'interrupted'): void {
    if (this.timing && this.timing.finished_ms == null) {
      this.timing.finished_ms = elapsedSince(this.turnStarted, this.hooks.clock.monotonic());
    }
    this.running = false;
    this.lastTurnId = turnId;
    this.turnId = undefined;
    this.approvals.clear();
    this.inputs.clear();
    this.endRunningActivities();
    if (status === 'failed') this.status = 'turn_failed';
    this.changed();
    this.endTurnTrace(status);
  }

  // ---- messages ----

  private pushMessage(role: DisplayMessage['role'], text: string): void {
    const { message, cut } = displayMessage(role, text);
    if (cut) this.truncated = true;
    this.messages.push(message);
    this.messageBytes += message.bytes;
    this.enforceMessageBounds();
  }

  /** Drops the oldest messages past MESSAGES_MAX or MESSAGES_TEXT_MAX_BYTES. */
  private enforceMessageBounds(): void {
    let dropped = 0;
    while (
      this.messages.length > 1 &&
      (this.messages.length > Limits.MESSAGES_MAX || this.messageBytes > Limits.MESSAGES_TEXT_MAX_BYTES)
    ) {
      const oldest = this.messages.shift() as DisplayMessage;
      this.messageBytes -= oldest.bytes;
      dropped += 1;
    }
    if (dropped === 0) return;
    this.truncated = true;
    for (const activity of this.activities)
      activity.messageIndex = Math.max(0, activity.messageIndex - dropped);
  }

  // ---- activities ----

  private findActivity(nativeId: string): ActivityState | undefined {
    return this.activities.find((activity) => activity.nativeId === nativeId);
  }

  private createActivity(nativeId: string, kind: string): ActivityState | undefined {
    if (nativeId.length === 0 || nativeId.length > NATIVE_ID_MAX_CHARS || !KEPT_ACTIVITY_KINDS.has(kind)) {
      return undefined;
    }
    if (this.activities.length >= Limits.ACTIVITIES_MAX) {
      const evict = this.activities.findIndex((activity) => activity.status !== 'running');
      this.activities.splice(evict >= 0 ? evict : 0, 1);
      this.truncated = true;
    }
    const activity: ActivityState = {
      id: hashId(nativeId),
      nativeId,
      kind,
      status: 'running',
      messageIndex: Math.max(0, this.messages.length - 1),
      durationMs: 0,
      truncated: false,
      detailBytes: 0,
    };
    this.activities.push(activity);
    return activity;
  }

  private showsDetails(activity: ActivityState): boolean {
    return this.saved && DETAIL_ACTIVITY_KINDS.has(activity.kind);
  }

  private detailText(activity: ActivityState, text: string): string {
    const clean = stripHidden(text);
    const bounded = utf8Head(clean, Limits.ACTIVITY_FIELD_MAX_BYTES);
    if (bounded.length !== clean.length) activity.truncated = true;
    return bounded;
  }

  private onActivity(native: NativeActivity): void {
    const activity = this.findActivity(native.nativeId) ?? this.createActivity(native.nativeId, native.kind);
    if (!activity) return;
    const final = activity.status !== 'running';
    // A late non-final update never reopens an activity that already finished.
    if (final && native.status === 'running') return;
    activity.status = native.status;
    if (native.durationMs !== undefined) activity.durationMs = Math.max(0, Math.round(native.durationMs));
    if (this.showsDetails(activity)) {
      if (native.command !== undefined) activity.command = this.detailText(activity, native.command);
      if (native.cwd !== undefined) activity.directory = this.detailText(activity, native.cwd);
      if (native.output !== undefined) activity.output = this.detailText(activity, native.output);
      if (native.exitCode !== undefined) activity.exitCode = native.exitCode;
      if (native.changes !== undefined) activity.changes = this.projectChanges(activity, native.changes);
      this.enforceDetailBudget(activity);
    }
    this.changed();
  }

  private projectChanges(
    activity: ActivityState,
    changes: NonNullable<NativeActivity['changes']>,
  ): FileChange[] {
    const kept = changes.filter((change) => CHANGE_KINDS.has(change.kind));
    if (kept.length > CHANGES_MAX) activity.truncated = true;
    // All diffs of one activity share one field budget, so one activity stays far below the window budget.
    let budget = Limits.ACTIVITY_FIELD_MAX_BYTES;
    return kept.slice(0, CHANGES_MAX).map((change) => {
      const projected: FileChange = { path: stripHidden(change.path), kind: change.kind };
      if (change.movePath) projected.move_path = stripHidden(change.movePath);
      if (change.diff !== undefined) {
        const clean = stripHidden(change.diff);
        const diff = utf8Head(clean, budget);
        if (diff.length !== clean.length) activity.truncated = true;
        budget -= utf8Bytes(diff);
        projected.diff = diff;
      }
      return projected;
    });
  }

  private onOutputDelta(nativeId: string, text: string): void {
    const activity = this.findActivity(nativeId);
    if (!activity || !this.showsDetails(activity) || !text) return;
    const current = activity.output ?? '';
    if (utf8Bytes(current) >= Limits.ACTIVITY_FIELD_MAX_BYTES) {
      activity.truncated = true;
      return;
    }
    activity.output = this.detailText(activity, current + text);
    this.enforceDetailBudget(activity);
    this.changed();
  }

  private onTurnDiff(turnId: string, diff: string): void {
    const nativeId = `turn-diff:${turnId}`;
    const activity = this.findActivity(nativeId) ?? this.createActivity(nativeId, 'turnDiff');
    if (!activity) return;
    if (this.showsDetails(activity)) {
      activity.output = this.detailText(activity, diff);
      this.enforceDetailBudget(activity);
    }
    this.changed();
  }

  private measureDetails(activity: ActivityState): number {
    let bytes =
      utf8Bytes(activity.command ?? '') +
      utf8Bytes(activity.directory ?? '') +
      utf8Bytes(activity.output ?? '');
    for (const change of activity.changes ?? []) {
      bytes +=
        utf8Bytes(change.path ?? '') + utf8Bytes(change.diff ?? '') + utf8Bytes(change.move_path ?? '');
    }
    activity.detailBytes = bytes;
    return bytes;
  }

  /** Older rows give up output and diffs so the newest always keeps its full field budget. */
  private enforceDetailBudget(latest: ActivityState): void {
    this.measureDetails(latest);
    let total = this.activities.reduce((sum, activity) => sum + activity.detailBytes, 0);
    while (total > Limits.ACTIVITY_WINDOW_MAX_BYTES) {
      const strippable = (activity: ActivityState): boolean =>
        activity !== latest &&
        (activity.output !== undefined || (activity.changes ?? []).some((c) => c.diff));
      const victim =
        this.activities.find((activity) => strippable(activity) && activity.status !== 'running') ??
        this.activities.find(strippable);
      if (!victim) break;
      total -= victim.detailBytes;
      victim.output = undefined;
      victim.changes = victim.changes?.map(({ diff: _diff, ...rest }) => rest);
      victim.truncated = true;
      total += this.measureDetails(victim);
    }
  }

  // ---- approvals ----

  private autoDecline(nativeId: string | number): void {
    this.status = 'approval_declined';
    this.changed();
    this.agent?.respondApproval(nativeId, 'decline').catch(() => {
      this.log.warn(`Session ${this.id} could not decline an approval request; closing it.`);
      this.fail('unavailable');
    });
  }

  private onApprovalRequest(event: Extract<AgentEvent, { type: 'approval_request' }>): void {
    for (const pending of this.approvals.values()) {
      if (pending.nativeId === event.nativeId) return;
    }
    if (!this.saved || !this.acceptsTurn(event.turnId) || this.approvals.size >= APPROVALS_PENDING_MAX) {
      this.autoDecline(event.nativeId);
      return;
    }
    let view: Approval;
    if (event.kind === 'command') {
      const command = event.command ?? '';
      if (!command.trim() || command.length > APPROVAL_COMMAND_MAX_CHARS) {
        this.autoDecline(event.nativeId);
        return;
      }
      view = {
        id: randomId(),
        kind: 'command',
        command: stripHidden(command),
        directory: stripHidden(event.cwd ?? this.cwd),
      };
    } else {
      const changes = this.approvableChanges(event.itemId);
      if (!changes) {
        this.autoDecline(event.nativeId);
        return;
      }
      view = { id: randomId(), kind: 'file_change', directory: this.projectRoot, changes };
    }
    if (event.reason) view.reason = utf8Head(stripHidden(event.reason), Limits.ACTIVITY_FIELD_MAX_BYTES);
    const views = [...this.approvals.values()].map((pending) => pending.view);
    if (utf8Bytes(JSON.stringify([...views, view])) > APPROVAL_VIEWS_MAX_BYTES) {
      this.autoDecline(event.nativeId);
      return;
    }
    this.approvals.set(view.id, { nativeId: event.nativeId, turnId: event.turnId, view });
    this.turnTrace?.waitStarted('approval', view.id);
    this.changed();
  }

  /**
   * A file change may be approved only when its running activity shows every diff in full and
   * every path stays inside the project (lexically, and through the canonical existing parent).
   */
  private approvableChanges(itemId: string | undefined): FileChange[] | undefined {
    const activity = itemId ? this.findActivity(itemId) : undefined;
    if (!activity || activity.kind !== 'fileChange' || activity.status !== 'running' || activity.truncated) {
      return undefined;
    }
    const changes = activity.changes ?? [];
    if (changes.length === 0 || changes.some((change) => change.diff === undefined)) return undefined;
    const root = this.projectRoot;
    const inside = (path: string | undefined): boolean => {
      if (!path) return false;
      const target = resolve(this.cwd, path);
      if (!isInside(root, target)) return false;
      let parent = dirname(target);
      while (!existsSync(parent)) {
        const up = dirname(parent);
        if (up === parent) return false;
        parent = up;
      }
      try {
        return isInside(root, realpathSync(parent));
      } catch {
        return false;
      }
    };
    const ok = changes.every(
      (change) => inside(change.path) && (change.move_path === undefined || inside(change.move_path)),
    );
    return ok ? changes.map((change) => ({ ...change })) : undefined;
  }

  /** Takes a pending approval for `approve`: it is consumed before any I/O, so never replayed. */
  takeApproval(viewId: string): { nativeId: string | number; response?: ApprovalResponse } | undefined {
    const pending = this.approvals.get(viewId);
    if (!pending || !this.running || (this.turnId !== undefined && pending.turnId !== this.turnId))
      return undefined;
    this.approvals.delete(viewId);
    this.turnTrace?.waitEnded(viewId);
    this.changed();
    return { nativeId: pending.nativeId };
  }

  // ---- input requests ----

  private rejectInput(nativeId: string | number): void {
    this.status = 'approval_declined';
    this.changed();
    this.agent?.respondInput(nativeId, {}).catch(() => {
      this.log.warn(`Session ${this.id} could not refuse an input request; closing it.`);
      this.fail('unavailable');
    });
  }

  private onInputRequest(event: Extract<AgentEvent, { type: 'input_request' }>): void {
    for (const pending of this.inputs.values()) {
      if (pending.nativeId === event.nativeId) return;
    }
    const questions = validQuestions(event.questions);
    if (
      !this.saved ||
      !this.acceptsTurn(event.turnId) ||
      !questions ||
      event.itemId.length === 0 ||
      event.itemId.length > INPUT_ITEM_ID_MAX_CHARS ||
      this.inputs.size >= INPUTS_PENDING_MAX
    ) {
      this.rejectInput(event.nativeId);
      return;
    }
    const view: InputRequest = { id: randomId(), questions, blocking: true };
    const activity = this.findActivity(event.itemId) ?? this.createActivity(event.itemId, 'userInput');
    if (activity) {
      activity.status = 'running';
      activity.output = this.detailText(
        activity,
        questions.map((question) => question.question ?? '').join('\n'),
      );
      this.enforceDetailBudget(activity);
    }
    this.turnTrace?.waitStarted('input', view.id);
    this.inputs.set(view.id, {
      nativeId: event.nativeId,
      turnId: event.turnId,
      activityNativeId: event.itemId,
      view,
    });
    this.changed();
  }

  pendingInput(viewId: string): InputRequest | undefined {
    const pending = this.inputs.get(viewId);
    if (!pending || !this.running || (this.turnId !== undefined && pending.turnId !== this.turnId))
      return undefined;
    return pending.view;
  }

  /** Consumes a pending input (before I/O) and records "question → answer" with secrets hidden. */
  takeInput(viewId: string, answers: Map<string, string>): { nativeId: string | number } | undefined {
    const pending = this.inputs.get(viewId);
    if (!pending) return undefined;
    this.inputs.delete(viewId);
    this.turnTrace?.waitEnded(viewId);
    const activity = this.findActivity(pending.activityNativeId);
    if (activity) {
      const lines = (pending.view.questions ?? []).map((question) => {
        const answer = question.is_secret ? HIDDEN_ANSWER : (answers.get(question.id) ?? '');
        return `${question.question ?? question.id} → ${answer}`;
      });
      activity.output = this.detailText(activity, lines.join('\n'));
      activity.status = 'completed';
      this.enforceDetailBudget(activity);
    }
    this.changed();
    return { nativeId: pending.nativeId };
  }

  private onRequestResolved(nativeId: string | number): void {
    for (const [id, pending] of this.approvals) {
      if (pending.nativeId === nativeId) {
        this.approvals.delete(id);
        this.turnTrace?.waitEnded(id);
        this.changed();
        return;
      }
    }
    for (const [id, pending] of this.inputs) {
      if (pending.nativeId === nativeId) {
        this.inputs.delete(id);
        this.turnTrace?.waitEnded(id);
        const activity = this.findActivity(pending.activityNativeId);
        if (activity && activity.status === 'running') activity.status = 'ended';
        this.changed();
        return;
      }
    }
  }

  // ---- snapshot ----

  private projectActivity(activity: ActivityState): Activity {
    const view: Activity = {
      id: activity.id,
      kind: activity.kind,
      status: activity.status,
      message_index: activity.messageIndex,
      duration_ms: activity.durationMs,
    };
    if (this.showsDetails(activity)) {
      view.command = activity.command;
      view.directory = activity.directory;
      view.output = activity.output;
      if (activity.exitCode !== undefined) view.exit_code = activity.exitCode;
      view.changes = activity.changes;
      view.truncated = activity.truncated;
    }
    return view;
  }

  /** The full display state as `poll` answers it, bounded to SNAPSHOT_MAX_BYTES. */
  snapshot(): EdgeAgentResult {
    const agent = this.agent;
    const snapshot: EdgeAgentResult = {
      version: EDGE_AGENT_RPC_VERSION,
      status: this.status,
      session_id: this.id,
      thread_id: agent?.threadId,
      agent_version: agent?.agentVersion,
      model: this.selectedModel ?? this.restoredModel ?? agent?.model,
      project: this.cwd,
      started_at: new Date(this.startedAt).toISOString(),
      running: this.running,
      closed: this.closed,
      revision: this.revision,
      window: this.window,
      truncated: this.truncated,
      messages: this.messages.map((message) => ({
        role: message.role,
        text: message.text,
        ...(message.attachments ? { attachments: message.attachments } : {}),
      })),
      activities: this.activities.map((activity) => this.projectActivity(activity)),
      title: this.displayTitle(),
      skills: this.skills.map((skill) => ({
        id: skill.id,
        name: skill.info.name,
        description: skill.info.description,
      })),
      skills_available: this.skillsAvailable,
      models: this.models ?? undefined,
      models_available: this.models !== null,
      approvals: this.closed ? [] : [...this.approvals.values()].map((pending) => pending.view),
      permissions_available: Boolean(agent?.capabilities.permissions) && this.saved,
      permission_mode: this.permissionMode,
      input_requests: this.closed ? [] : [...this.inputs.values()].map((pending) => pending.view),
      turn_timing: this.timing ? { ...this.timing } : undefined,
      session_management: true,
      // Files and uploads are for saved sessions only (reference §4, §9.16).
      files_available: this.saved,
      files_upload_available: this.saved,
      history_windowing: this.saved,
    };
    return boundSnapshot(snapshot);
  }
}

/** The accepted, cleaned questions of an input request, or undefined when any bound is broken. */
function validQuestions(questions: InputQuestion[]): InputQuestion[] | undefined {
  if (questions.length < 1 || questions.length > INPUT_QUESTIONS_MAX) return undefined;
  const ids = new Set<string>();
  const cleaned: InputQuestion[] = [];
  for (const question of questions) {
    const text = question.question ?? '';
    const header = question.header ?? '';
    const options = question.options ?? [];
    if (
      question.id.length < 1 ||
      question.id.length > INPUT_QUESTION_ID_MAX_CHARS ||
      ids.has(question.id) ||
      text.length < 1 ||
      text.length > INPUT_QUESTION_TEXT_MAX_CHARS ||
      header.length > INPUT_HEADER_MAX_CHARS ||
      options.length > INPUT_OPTIONS_MAX
    ) {
      return undefined;
    }
    ids.add(question.id);
    const labels = new Set<string>();
    for (const option of options) {
      const description = option.description ?? '';
      if (
        option.label.length < 1 ||
        option.label.length > INPUT_LABEL_MAX_CHARS ||
        labels.has(option.label) ||
        description.length > INPUT_DESCRIPTION_MAX_CHARS
      ) {
        return undefined;
      }
      labels.add(option.label);
    }
    cleaned.push({
      id: question.id,
      header: question.header ? stripHidden(question.header) : undefined,
      question: stripHidden(text),
      is_other: question.is_other,
      is_secret: question.is_secret,
      options: options.map((option) => ({
        label: option.label,
        description: option.description ? stripHidden(option.description) : undefined,
      })),
    });
  }
  return cleaned;
}
