// The activities of the display window (reference §3 "Activity projection"): which native items
// show, what of them a client sees, and the byte budgets that keep the window bounded.
import { Limits, type Activity, type FileChange } from '#contracts';
import { FILE_CHANGE_KINDS, ITEM_ACTIVITY_KINDS } from '../agent/activity-kinds.js';
import type { NativeActivity } from '../agent/agent-driver.js';
import { NATIVE_ID_MAX_CHARS } from '../agent/prompt-limits.js';
import { hashId } from '../common/random.js';
import { stripHidden, utf8Bytes, utf8Head } from '../common/utf8.js';

/** Activity kinds a snapshot shows (reference §3); anything else (agent chatter) is dropped. */
const KEPT_ACTIVITY_KINDS: ReadonlySet<string> = new Set([...ITEM_ACTIVITY_KINDS, 'userInput', 'turnDiff']);
/** Kinds whose command, output and diffs are shown, and only to saved-access sessions. */
const DETAIL_ACTIVITY_KINDS: ReadonlySet<string> = new Set([
  'commandExecution',
  'fileChange',
  'turnDiff',
  'userInput',
]);
/** File changes shown per activity (reference §3). */
const CHANGES_MAX = 32;
/** Activity statuses a seed may carry; anything else shows as ended. */
const RESTORED_STATUSES: ReadonlySet<string> = new Set([
  'running',
  'completed',
  'failed',
  'declined',
  'ended',
]);

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

export interface ActivityLogHooks {
  /** The index of the newest message, which a new activity belongs to. */
  messageIndex(): number;
  /** An activity was evicted to make room: the window no longer shows everything. */
  evicted(): void;
}

/**
 * What an activity's details weigh against the window's budget (ACTIVITY_WINDOW_MAX_BYTES):
 * command, directory, output and every change's path, diff and move path, in UTF-8 bytes.
 */
export function activityDetailBytes(
  activity: Pick<Activity, 'command' | 'directory' | 'output' | 'changes'>,
): number {
  let bytes =
    utf8Bytes(activity.command ?? '') +
    utf8Bytes(activity.directory ?? '') +
    utf8Bytes(activity.output ?? '');
  for (const change of activity.changes ?? []) {
    bytes += utf8Bytes(change.path ?? '') + utf8Bytes(change.diff ?? '') + utf8Bytes(change.move_path ?? '');
  }
  return bytes;
}

export class ActivityLog {
  private activities: ActivityState[] = [];

  constructor(
    /** Details (commands, output, diffs) are kept for saved-access sessions only. */
    private readonly saved: boolean,
    private readonly hooks: ActivityLogHooks,
  ) {}

  get isEmpty(): boolean {
    return this.activities.length === 0;
  }

  clear(): void {
    this.activities = [];
  }

  /** Older messages were dropped from the window: indices follow the messages they point at. */
  messagesDropped(count: number): void {
    for (const activity of this.activities)
      activity.messageIndex = Math.max(0, activity.messageIndex - count);
  }

  /** Takes the activities of a resume seed (already checked against the display bounds). */
  restore(views: readonly Activity[], messageCount: number): void {
    for (const view of views) {
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
        messageIndex: Math.max(0, Math.min(view.message_index ?? 0, messageCount - 1)),
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

  /** A native item started or changed; false when nothing shown changed. */
  apply(native: NativeActivity): boolean {
    const activity = this.findOrCreate(native.nativeId, native.kind);
    if (!activity) return false;
    const final = activity.status !== 'running';
    // A late non-final update never reopens an activity that already finished.
    if (final && native.status === 'running') return false;
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
    return true;
  }

  /** Streamed command output or plan text; false when nothing shown changed. */
  appendOutput(nativeId: string, text: string): boolean {
    const activity = this.find(nativeId);
    if (!activity || !this.showsDetails(activity) || !text) return false;
    const current = activity.output ?? '';
    if (utf8Bytes(current) >= Limits.ACTIVITY_FIELD_MAX_BYTES) {
      activity.truncated = true;
      return false;
    }
    this.setOutput(activity, current + text);
    return true;
  }

  /** The turn's aggregated diff, one activity per turn; false when nothing shown changed. */
  turnDiff(turnId: string, diff: string): boolean {
    const activity = this.findOrCreate(`turn-diff:${turnId}`, 'turnDiff');
    if (!activity) return false;
    if (this.showsDetails(activity)) this.setOutput(activity, diff);
    return true;
  }

  /** An input request shows its questions on its item's userInput activity, running. */
  inputAsked(itemId: string, questions: string): void {
    const activity = this.findOrCreate(itemId, 'userInput');
    if (!activity) return;
    activity.status = 'running';
    this.setOutput(activity, questions);
  }

  /** The request was answered: the activity shows the answers and completes. */
  inputAnswered(itemId: string, answers: string): void {
    const activity = this.find(itemId);
    if (!activity) return;
    activity.output = this.detailText(activity, answers);
    activity.status = 'completed';
    this.enforceDetailBudget(activity);
  }

  /** The request went away unanswered. */
  inputDropped(itemId: string): void {
    const activity = this.find(itemId);
    if (activity && activity.status === 'running') activity.status = 'ended';
  }

  endRunning(): void {
    for (const activity of this.activities) {
      if (activity.status === 'running') activity.status = 'ended';
    }
  }

  /**
   * The changes of a running file-change item when every diff is shown in full (a copy), so an
   * approval shows exactly what it allows; otherwise undefined.
   */
  completeChanges(itemId: string | undefined): FileChange[] | undefined {
    const activity = itemId ? this.find(itemId) : undefined;
    if (!activity || activity.kind !== 'fileChange' || activity.status !== 'running' || activity.truncated) {
      return undefined;
    }
    const changes = activity.changes ?? [];
    if (changes.length === 0 || changes.some((change) => change.diff === undefined)) return undefined;
    return changes.map((change) => ({ ...change }));
  }

  views(): Activity[] {
    return this.activities.map((activity) => this.project(activity));
  }

  private find(nativeId: string): ActivityState | undefined {
    return this.activities.find((activity) => activity.nativeId === nativeId);
  }

  private findOrCreate(nativeId: string, kind: string): ActivityState | undefined {
    const found = this.find(nativeId);
    if (found) return found;
    if (nativeId.length === 0 || nativeId.length > NATIVE_ID_MAX_CHARS || !KEPT_ACTIVITY_KINDS.has(kind)) {
      return undefined;
    }
    if (this.activities.length >= Limits.ACTIVITIES_MAX) {
      const evict = this.activities.findIndex((activity) => activity.status !== 'running');
      this.activities.splice(evict >= 0 ? evict : 0, 1);
      this.hooks.evicted();
    }
    const activity: ActivityState = {
      id: hashId(nativeId),
      nativeId,
      kind,
      status: 'running',
      messageIndex: this.hooks.messageIndex(),
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

  private setOutput(activity: ActivityState, text: string): void {
    activity.output = this.detailText(activity, text);
    this.enforceDetailBudget(activity);
  }

  private projectChanges(
    activity: ActivityState,
    changes: NonNullable<NativeActivity['changes']>,
  ): FileChange[] {
    const kept = changes.filter((change) => FILE_CHANGE_KINDS.has(change.kind));
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

  private measureDetails(activity: ActivityState): number {
    activity.detailBytes = activityDetailBytes(activity);
    return activity.detailBytes;
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

  private project(activity: ActivityState): Activity {
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
}
