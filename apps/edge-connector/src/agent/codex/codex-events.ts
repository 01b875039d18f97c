// Codex app-server notifications and server requests → neutral AgentEvents. Pure functions: the
// session decides what to do with the result (emit, answer, decline).
import type { InputQuestion } from '#contracts';
import { FILE_CHANGE_KINDS, ITEM_ACTIVITY_KINDS } from '../activity-kinds.js';
import type { AgentEvent, NativeActivity } from '../agent-driver.js';
import { checkQuestions, within, type CheckedQuestion } from '../input-questions.js';
import {
  APPROVAL_COMMAND_MAX_CHARS,
  APPROVAL_PARAMS_MAX_BYTES,
  INPUT_ITEM_ID_MAX_CHARS,
  INPUT_PARAMS_MAX_BYTES,
  NATIVE_ID_MAX_CHARS,
} from '../prompt-limits.js';
import type { JsonObject, RequestId } from './json-rpc.js';

const ACTIVITY_KINDS: ReadonlySet<string> = new Set(ITEM_ACTIVITY_KINDS);

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
const validNativeId = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= NATIVE_ID_MAX_CHARS;

function activityStatus(rawStatus: unknown, completed: boolean): NativeActivity['status'] {
  if (!completed) return 'running';
  switch (rawStatus) {
    case 'completed':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'declined':
      return 'declined';
    default:
      // A completion without a final status (interrupted, cancelled) just ends the activity.
      return 'ended';
  }
}

function fileChanges(raw: unknown): NativeActivity['changes'] {
  if (!Array.isArray(raw)) return undefined;
  const changes: NonNullable<NativeActivity['changes']> = [];
  for (const change of raw) {
    if (!isObject(change) || !isObject(change.kind)) continue;
    const filePath = str(change.path);
    const kind = str(change.kind.type);
    if (!filePath || !kind || !FILE_CHANGE_KINDS.has(kind)) continue;
    const movePath = str(change.kind.move_path);
    changes.push({
      path: filePath,
      kind,
      ...(typeof change.diff === 'string' ? { diff: change.diff } : {}),
      ...(movePath ? { movePath } : {}),
    });
  }
  return changes;
}

/** An item of `item/started` / `item/completed` as an activity, or undefined for other kinds. */
export function itemActivity(item: JsonObject, completed: boolean): NativeActivity | undefined {
  const kind = str(item.type);
  if (!kind || !ACTIVITY_KINDS.has(kind) || !validNativeId(item.id)) return undefined;
  const activity: NativeActivity = {
    nativeId: item.id,
    kind,
    status: activityStatus(item.status, completed),
  };
  if (kind === 'commandExecution') {
    const command = str(item.command);
    const cwd = str(item.cwd);
    const output = str(item.aggregatedOutput);
    const durationMs = num(item.durationMs);
    if (command !== undefined) activity.command = command;
    if (cwd !== undefined) activity.cwd = cwd;
    if (output !== undefined) activity.output = output;
    if (completed) activity.exitCode = num(item.exitCode) ?? null;
    if (durationMs !== undefined) activity.durationMs = Math.max(0, durationMs);
  } else if (kind === 'fileChange') {
    const changes = fileChanges(item.changes);
    if (changes) activity.changes = changes;
  }
  // Reasoning text, tool arguments and MCP payloads are never projected.
  return activity;
}

/** Maps one notification of this session's thread; notifications of other threads give nothing. */
export function mapNotification(method: string, params: JsonObject, threadId: string): AgentEvent[] {
  if (params.threadId !== threadId) return [];
  const turnId = str(params.turnId) ?? '';
  switch (method) {
    case 'item/agentMessage/delta': {
      const itemId = str(params.itemId);
      const delta = str(params.delta);
      return itemId && delta ? [{ type: 'message_delta', turnId, itemId, text: delta }] : [];
    }
    case 'item/started':
    case 'item/completed': {
      if (!isObject(params.item)) return [];
      const activity = itemActivity(params.item, method === 'item/completed');
      return activity ? [{ type: 'activity', turnId, activity }] : [];
    }
    case 'item/commandExecution/outputDelta': {
      const nativeId = params.itemId;
      const delta = str(params.delta);
      return validNativeId(nativeId) && delta
        ? [{ type: 'output_delta', turnId, nativeId, text: delta }]
        : [];
    }
    case 'turn/diff/updated': {
      const diff = str(params.diff);
      return diff !== undefined ? [{ type: 'turn_diff', turnId, diff }] : [];
    }
    case 'item/plan/delta': {
      const nativeId = params.itemId;
      const delta = str(params.delta);
      return validNativeId(nativeId) && delta ? [{ type: 'plan_delta', turnId, nativeId, text: delta }] : [];
    }
    case 'thread/name/updated': {
      const title = str(params.threadName);
      return title ? [{ type: 'title', title }] : [];
    }
    case 'serverRequest/resolved': {
      const requestId = params.requestId;
      return typeof requestId === 'string' || typeof requestId === 'number'
        ? [{ type: 'request_resolved', nativeId: requestId }]
        : [];
    }
    case 'turn/completed': {
      if (!isObject(params.turn)) return [];
      const id = str(params.turn.id);
      const status = params.turn.status;
      if (!id) return [];
      const mapped = status === 'failed' ? 'failed' : status === 'interrupted' ? 'interrupted' : 'completed';
      return [{ type: 'turn_completed', turnId: id, status: mapped }];
    }
    default:
      return [];
  }
}

export type ApprovalCheck = { ok: true; event: ApprovalEvent } | { ok: false; reason: string };

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));
const present = (value: unknown): boolean => value !== undefined && value !== null;

type ApprovalEvent = Extract<AgentEvent, { type: 'approval_request' }>;

/** An approval that passed every check, as the event the session shows. */
const approved = (
  turnId: string,
  nativeId: RequestId,
  fields: Omit<ApprovalEvent, 'type' | 'turnId' | 'nativeId'>,
): ApprovalCheck => ({ ok: true, event: { type: 'approval_request', turnId, nativeId, ...fields } });

/**
 * Checks an approval request; anything it cannot show faithfully is declined without asking
 * (fail closed) [§3 approvals]. Session-level rules (pending count, view budget, running turn)
 * belong to the session manager.
 */
export function checkApproval(
  method: string,
  id: RequestId,
  params: JsonObject,
  threadId: string,
): ApprovalCheck {
  if (jsonBytes(params) > APPROVAL_PARAMS_MAX_BYTES) return { ok: false, reason: 'params_too_large' };
  if (params.threadId !== threadId) return { ok: false, reason: 'thread_mismatch' };
  const turnId = str(params.turnId);
  if (!turnId) return { ok: false, reason: 'turn_missing' };
  const itemId = validNativeId(params.itemId) ? params.itemId : undefined;
  const reason = str(params.reason);
  if (method === 'item/commandExecution/requestApproval') {
    if (params.kind !== undefined && params.kind !== 'command')
      return { ok: false, reason: 'kind_unsupported' };
    const command = str(params.command);
    if (!command || command.trim() === '' || command.length > APPROVAL_COMMAND_MAX_CHARS) {
      return { ok: false, reason: 'command_invalid' };
    }
    if (present(params.networkApprovalContext) || present(params.additionalPermissions)) {
      return { ok: false, reason: 'extra_permissions' };
    }
    const cwd = str(params.cwd);
    return approved(turnId, id, {
      kind: 'command',
      ...(itemId ? { itemId } : {}),
      command,
      ...(cwd ? { cwd } : {}),
      ...(reason ? { reason } : {}),
    });
  }
  if (method === 'item/fileChange/requestApproval') {
    if (present(params.grantRoot)) return { ok: false, reason: 'extra_permissions' };
    if (!itemId) return { ok: false, reason: 'item_missing' };
    return approved(turnId, id, { kind: 'file_change', itemId, ...(reason ? { reason } : {}) });
  }
  return { ok: false, reason: 'method_unsupported' };
}

export type InputCheck =
  { ok: true; event: Extract<AgentEvent, { type: 'input_request' }> } | { ok: false; reason: string };

/** A checked question as the neutral event carries it: empty parts and false flags left out. */
function neutralQuestion(checked: CheckedQuestion): InputQuestion {
  const { id, question, header, options, source } = checked;
  return {
    id,
    question,
    ...(header ? { header } : {}),
    ...(source.isOther === true ? { is_other: true } : {}),
    ...(source.isSecret === true ? { is_secret: true } : {}),
    ...(options.length ? { options } : {}),
  };
}

/** Checks a `item/tool/requestUserInput` request against the reference bounds [§3 input requests]. */
export function checkInputRequest(id: RequestId, params: JsonObject, threadId: string): InputCheck {
  if (jsonBytes(params) > INPUT_PARAMS_MAX_BYTES) return { ok: false, reason: 'params_too_large' };
  if (params.threadId !== threadId) return { ok: false, reason: 'thread_mismatch' };
  const turnId = str(params.turnId);
  if (!turnId) return { ok: false, reason: 'turn_missing' };
  if (!within(params.itemId, 1, INPUT_ITEM_ID_MAX_CHARS)) return { ok: false, reason: 'item_invalid' };
  const checked = checkQuestions(params.questions);
  if (!checked.ok) return checked;
  const questions = checked.questions.map(neutralQuestion);
  return {
    ok: true,
    event: { type: 'input_request', turnId, nativeId: id, itemId: params.itemId, questions },
  };
}
