// Approvals and input requests waiting for the remote user (reference §3 "Approvals", "Input
// requests"): what may be shown, how many at once, and how an answer finds its native request.
// Anything the edge cannot show faithfully is refused so the agent never waits on a card nobody
// can see.
import { existsSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Limits, type Approval, type FileChange, type InputQuestion, type InputRequest } from '#contracts';
import type { AgentEvent } from '../agent/agent-driver.js';
import { checkQuestions } from '../agent/input-questions.js';
import { APPROVAL_COMMAND_MAX_CHARS, INPUT_ITEM_ID_MAX_CHARS } from '../agent/prompt-limits.js';
import { randomId } from '../common/random.js';
import { stripHidden, utf8Bytes, utf8Head } from '../common/utf8.js';
import { isInside } from '../files/directories.js';

const APPROVALS_PENDING_MAX = 8;
const APPROVAL_VIEWS_MAX_BYTES = 128 * 1024;
const INPUTS_PENDING_MAX = 4;
/** What a secret answer shows as in the userInput activity. */
const HIDDEN_ANSWER = '[hidden]';

type ApprovalEvent = Extract<AgentEvent, { type: 'approval_request' }>;
type InputEvent = Extract<AgentEvent, { type: 'input_request' }>;

export interface PendingApproval {
  nativeId: string | number;
  turnId: string;
  view: Approval;
}

export interface PendingInput {
  nativeId: string | number;
  turnId: string;
  activityNativeId: string;
  view: InputRequest;
}

export type Resolved =
  { kind: 'approval'; viewId: string } | { kind: 'input'; viewId: string; pending: PendingInput };

/** Where an approval's command runs and file changes land. */
export interface ApprovalPlace {
  cwd: string;
  projectRoot: string;
  /** The complete changes of a running file-change item (see ActivityLog.completeChanges). */
  changesOf(itemId: string | undefined): FileChange[] | undefined;
}

/**
 * A path a file change touches stays inside the project, lexically and through the canonical
 * existing parent (a symlinked directory must not lead out).
 */
function confined(root: string, cwd: string, path: string | undefined): boolean {
  if (!path) return false;
  const target = resolve(cwd, path);
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
}

/** The card of an approval request, or undefined when it cannot be shown faithfully. */
export function approvalView(event: ApprovalEvent, place: ApprovalPlace): Approval | undefined {
  let view: Approval;
  if (event.kind === 'command') {
    const command = event.command ?? '';
    if (!command.trim() || command.length > APPROVAL_COMMAND_MAX_CHARS) return undefined;
    view = {
      id: randomId(),
      kind: 'command',
      command: stripHidden(command),
      directory: stripHidden(event.cwd ?? place.cwd),
    };
  } else {
    const changes = place.changesOf(event.itemId);
    const inside = (path: string | undefined): boolean => confined(place.projectRoot, place.cwd, path);
    const ok = changes?.every(
      (change) => inside(change.path) && (change.move_path === undefined || inside(change.move_path)),
    );
    if (!changes || !ok) return undefined;
    view = { id: randomId(), kind: 'file_change', directory: place.projectRoot, changes };
  }
  if (event.reason) view.reason = utf8Head(stripHidden(event.reason), Limits.ACTIVITY_FIELD_MAX_BYTES);
  return view;
}

/** The questions of an input request as shown, or undefined when any bound is broken. */
export function inputQuestions(event: InputEvent): InputQuestion[] | undefined {
  if (event.itemId.length === 0 || event.itemId.length > INPUT_ITEM_ID_MAX_CHARS) return undefined;
  if (!checkQuestions(event.questions).ok) return undefined;
  return event.questions.map((question) => ({
    id: question.id,
    header: question.header ? stripHidden(question.header) : undefined,
    question: stripHidden(question.question ?? ''),
    is_other: question.is_other,
    is_secret: question.is_secret,
    options: (question.options ?? []).map((option) => ({
      label: option.label,
      description: option.description ? stripHidden(option.description) : undefined,
    })),
  }));
}

/** "question → answer" lines for the userInput activity, secrets hidden. */
export function answerLines(view: InputRequest, answers: ReadonlyMap<string, string>): string {
  const lines = (view.questions ?? []).map((question) => {
    const answer = question.is_secret ? HIDDEN_ANSWER : (answers.get(question.id) ?? '');
    return `${question.question ?? question.id} → ${answer}`;
  });
  return lines.join('\n');
}

export class PendingPrompts {
  private readonly approvals = new Map<string, PendingApproval>();
  private readonly inputs = new Map<string, PendingInput>();

  /** A native request already pending (drivers may repeat one): it is neither added nor refused. */
  hasApproval(nativeId: string | number): boolean {
    return [...this.approvals.values()].some((pending) => pending.nativeId === nativeId);
  }

  hasInput(nativeId: string | number): boolean {
    return [...this.inputs.values()].some((pending) => pending.nativeId === nativeId);
  }

  get approvalsFull(): boolean {
    return this.approvals.size >= APPROVALS_PENDING_MAX;
  }

  get inputsFull(): boolean {
    return this.inputs.size >= INPUTS_PENDING_MAX;
  }

  /** False when the cards shown together would pass their byte budget. */
  addApproval(nativeId: string | number, turnId: string, view: Approval): boolean {
    if (utf8Bytes(JSON.stringify([...this.approvalViews(), view])) > APPROVAL_VIEWS_MAX_BYTES) return false;
    this.approvals.set(view.id, { nativeId, turnId, view });
    return true;
  }

  addInput(pending: PendingInput): void {
    this.inputs.set(pending.view.id, pending);
  }

  approval(viewId: string): PendingApproval | undefined {
    return this.approvals.get(viewId);
  }

  input(viewId: string): PendingInput | undefined {
    return this.inputs.get(viewId);
  }

  /** Consumes a pending prompt (before any I/O, so an answer is never replayed). */
  take(viewId: string): void {
    this.approvals.delete(viewId);
    this.inputs.delete(viewId);
  }

  /** The native side settled a request by itself: its card goes. */
  resolve(nativeId: string | number): Resolved | undefined {
    for (const [viewId, pending] of this.approvals) {
      if (pending.nativeId === nativeId) {
        this.approvals.delete(viewId);
        return { kind: 'approval', viewId };
      }
    }
    for (const [viewId, pending] of this.inputs) {
      if (pending.nativeId === nativeId) {
        this.inputs.delete(viewId);
        return { kind: 'input', viewId, pending };
      }
    }
    return undefined;
  }

  clear(): void {
    this.approvals.clear();
    this.inputs.clear();
  }

  approvalViews(): Approval[] {
    return [...this.approvals.values()].map((pending) => pending.view);
  }

  inputViews(): InputRequest[] {
    return [...this.inputs.values()].map((pending) => pending.view);
  }
}
