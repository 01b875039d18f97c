// The rules of reference §2.2 for an edge_agent request and the edge's RPC envelope checks.
import { actionSpec, type ActionSpec, type FileAction } from '../actions.js';
import {
  APPROVAL_DECISIONS,
  EDGE_AGENT_RPC_VERSION,
  PERMISSION_MODES,
  type AgentFileOperation,
  type EdgeAgentRequest,
  type EdgeAgentRPCRequest,
} from '../edge-agent.js';
import {
  ACTOR_ID_MAX_LENGTH,
  CLIENT_OPERATION_ID_MAX_LENGTH,
  DIRECTORY_MAX_BYTES,
  HISTORY_PAGE_MAX,
  INSTALLATION_ID_MAX_BYTES,
  MODEL_MAX_BYTES,
  PROJECT_MAX_BYTES,
  SESSION_ID_MAX_BYTES,
  TEXT_MAX_BYTES,
  TITLE_MAX_RUNES,
} from '../limits.js';
import { isOperationAction, PAYLOAD_FINGERPRINT_PATTERN } from '../operations.js';

import {
  exceedsBytes,
  hasControlChars,
  isBlank,
  isEdgeId,
  isOpaqueId,
  isValidUtf8,
  runeCountExceeds,
  isDecimalUint64,
} from './predicates.js';
import {
  checkAnswers,
  checkAttachments,
  checkFileLimits,
  checkFileShape,
  isHistoryBefore,
  isHistoryPage,
} from './field-rules.js';

export type ValidationResult = { ok: true } | { ok: false; reason: string };

const OK: ValidationResult = { ok: true };
function fail(reason: string): ValidationResult {
  return { ok: false, reason };
}

const PERMISSION_MODE_SET: ReadonlySet<string> = new Set(PERMISSION_MODES);
const DECISION_SET: ReadonlySet<string> = new Set(APPROVAL_DECISIONS);

/**
 * The mutation envelope's wire rules (operations.ts): only on the six mutating actions, the id
 * and the fingerprint together, the fingerprint a sha256 hex digest, fence and revision positive
 * integers. The id's finer format (`<ms>-<hex>`) is the ledger's to judge: it answers
 * `agent_session_operation_invalid`, as the reference does.
 */
function validateEnvelope(r: EdgeAgentRequest): ValidationResult {
  const id = r.client_operation_id;
  const fingerprint = r.payload_fingerprint;
  const fence = r.expected_runtime_fence;
  const revision = r.expected_revision;
  const retryUnknown = r.retry_unknown;
  if (
    id === undefined &&
    fingerprint === undefined &&
    fence === undefined &&
    revision === undefined &&
    retryUnknown === undefined
  ) {
    return OK;
  }
  if (!isOperationAction(r.action)) {
    return fail(
      'client_operation_id, payload_fingerprint, expected_runtime_fence, expected_revision and retry_unknown are only allowed with send, interrupt, approve, answer, model and permissions',
    );
  }
  if ((id === undefined) !== (fingerprint === undefined)) {
    return fail('client_operation_id and payload_fingerprint must be sent together');
  }
  if (id === undefined) {
    return fail('expected_runtime_fence, expected_revision and retry_unknown need client_operation_id');
  }
  if (id.trim() === '' || id.length > CLIENT_OPERATION_ID_MAX_LENGTH || hasControlChars(id)) {
    return fail(`client_operation_id must be 1 to ${CLIENT_OPERATION_ID_MAX_LENGTH} printable characters`);
  }
  if (fingerprint === undefined || !PAYLOAD_FINGERPRINT_PATTERN.test(fingerprint)) {
    return fail('payload_fingerprint must be 64 lowercase hex characters (sha256)');
  }
  if (fence !== undefined && (!Number.isSafeInteger(fence) || fence < 1)) {
    return fail('expected_runtime_fence must be a positive integer');
  }
  const operation = actionSpec(r.action)?.operation;
  if (revision !== undefined) {
    if (operation !== 'prompt') {
      return fail('expected_revision is only allowed with approve and answer');
    }
    if (!Number.isSafeInteger(revision) || revision < 1)
      return fail('expected_revision must be a positive integer');
  }
  if (retryUnknown !== undefined && operation !== 'send')
    return fail('retry_unknown is only allowed with send');
  return OK;
}

/** The rules of reference §2.2 for one request: sizes, allowed fields, values, per-action shape. */
export function validateEdgeAgentRequest(r: EdgeAgentRequest): ValidationResult {
  if (typeof r.edge_id !== 'string' || !isEdgeId(r.edge_id)) {
    return fail('edge_id must be a non-zero decimal uint64');
  }
  const spec = actionSpec(r.action);
  if (spec === undefined) return fail('unknown action');
  // In this order: the first rule a request breaks is the one it is told about.
  for (const rule of [checkSizes, validateEnvelope, checkPlacement, checkValues, checkActionValues]) {
    const verdict = rule(r, spec);
    if (!verdict.ok) return verdict;
  }
  return checkShape(r, spec);
}

/** Size limits. */
function checkSizes(r: EdgeAgentRequest): ValidationResult {
  const text = r.text ?? '';
  const project = r.project ?? '';
  const installationId = r.installation_id ?? '';
  const sessionId = r.session_id ?? '';
  const directory = r.directory ?? '';
  const workingDirectory = r.working_directory ?? '';
  const model = r.model ?? '';
  if (exceedsBytes(text, TEXT_MAX_BYTES)) return fail(`text exceeds ${TEXT_MAX_BYTES} bytes`);
  if (exceedsBytes(project, PROJECT_MAX_BYTES)) return fail(`project exceeds ${PROJECT_MAX_BYTES} bytes`);
  if (exceedsBytes(installationId, INSTALLATION_ID_MAX_BYTES)) {
    return fail(`installation_id exceeds ${INSTALLATION_ID_MAX_BYTES} bytes`);
  }
  if (exceedsBytes(sessionId, SESSION_ID_MAX_BYTES)) {
    return fail(`session_id exceeds ${SESSION_ID_MAX_BYTES} bytes`);
  }
  if (exceedsBytes(directory, DIRECTORY_MAX_BYTES)) {
    return fail(`directory exceeds ${DIRECTORY_MAX_BYTES} bytes`);
  }
  if (exceedsBytes(workingDirectory, DIRECTORY_MAX_BYTES)) {
    return fail(`working_directory exceeds ${DIRECTORY_MAX_BYTES} bytes`);
  }
  if (exceedsBytes(model, MODEL_MAX_BYTES)) return fail(`model exceeds ${MODEL_MAX_BYTES} bytes`);
  return OK;
}

/** Fields that must be empty unless the action matches. */
function checkPlacement(r: EdgeAgentRequest, spec: ActionSpec): ValidationResult {
  const action = r.action;
  if ((r.cursor ?? '') !== '' && action !== 'watch') return fail('cursor is only allowed with watch');
  if ((r.model ?? '') !== '' && action !== 'model') return fail('model is only allowed with model');
  if ((r.title ?? '') !== '' && action !== 'rename') return fail('title is only allowed with rename');
  if ((r.directory ?? '') !== '' && action !== 'directories')
    return fail('directory is only allowed with directories');
  if ((r.working_directory ?? '') !== '' && action !== 'start')
    return fail('working_directory is only allowed with start');
  if ((r.history_page ?? '') !== '' && action !== 'sessions')
    return fail('history_page is only allowed with sessions');
  if ((r.history_before ?? '') !== '' && action !== 'transcript') {
    return fail('history_before is only allowed with transcript');
  }
  if (((r.approval_id ?? '') !== '' || (r.decision ?? '') !== '') && action !== 'approve') {
    return fail('approval_id and decision are only allowed with approve');
  }
  if ((r.permission_mode ?? '') !== '' && action !== 'permissions') {
    return fail('permission_mode is only allowed with permissions');
  }
  if (((r.input_id ?? '') !== '' || (r.answers ?? []).length > 0) && action !== 'answer') {
    return fail('input_id and answers are only allowed with answer');
  }
  if ((r.skill_id ?? '') !== '' && action !== 'send') return fail('skill_id is only allowed with send');
  if ((r.attachments ?? []).length > 0 && (action !== 'send' || (r.access_id ?? '') === '')) {
    return fail('attachments are only allowed with send on a saved access');
  }
  if (r.file !== undefined && !spec.file) return fail('file is only allowed with file actions');
  if (r.file === undefined && spec.file) return fail('file is required with file actions');
  return OK;
}

/** The values of the ids and cursors any action may carry. */
function checkValues(r: EdgeAgentRequest): ValidationResult {
  const accessId = r.access_id ?? '';
  const skillId = r.skill_id ?? '';
  const cursor = r.cursor ?? '';
  const historyPage = r.history_page ?? '';
  if (accessId !== '' && !isOpaqueId(accessId)) return fail('access_id must be a 32-character id');
  if (skillId !== '' && !isOpaqueId(skillId)) return fail('skill_id must be a 32-character id');
  if (cursor !== '' && !isDecimalUint64(cursor)) return fail('cursor must be a decimal uint64');
  if (historyPage !== '' && !isHistoryPage(historyPage)) {
    return fail(`history_page must be an integer from 1 to ${HISTORY_PAGE_MAX}`);
  }
  return OK;
}

/** The free-form values of the actions that carry them, then attachments and file chunks. */
function checkActionValues(r: EdgeAgentRequest): ValidationResult {
  const problem = actionValueProblem(r);
  if (problem !== null) return fail(problem);
  const attachments = r.attachments ?? [];
  const attached = attachments.length > 0 ? checkAttachments(attachments) : null;
  if (attached !== null) return fail(attached);
  const chunk = r.file !== undefined ? checkFileLimits(r.file) : null;
  return chunk === null ? OK : fail(chunk);
}

function actionValueProblem(r: EdgeAgentRequest): string | null {
  const title = r.title ?? '';
  const model = r.model ?? '';
  switch (r.action) {
    case 'rename':
      if (!isValidUtf8(title)) return 'title must be valid UTF-8';
      if (isBlank(title)) return 'title must not be blank';
      if (runeCountExceeds(title, TITLE_MAX_RUNES)) return `title exceeds ${TITLE_MAX_RUNES} characters`;
      if (hasControlChars(title)) return 'title must not contain control characters';
      return null;
    case 'model':
      if (model === '') return 'model is required';
      if (hasControlChars(model)) return 'model must not contain control characters';
      return null;
    case 'approve':
      if (!isOpaqueId(r.approval_id ?? '')) return 'approval_id must be a 32-character id';
      if (!DECISION_SET.has(r.decision ?? '')) return 'decision must be accept or decline';
      return null;
    case 'permissions':
      return PERMISSION_MODE_SET.has(r.permission_mode ?? '')
        ? null
        : 'permission_mode must be read-only or workspace-write';
    case 'answer':
      if (!isOpaqueId(r.input_id ?? '')) return 'input_id must be a 32-character id';
      return checkAnswers(r.answers ?? []);
    case 'transcript':
      if (!isHistoryBefore(r.history_before ?? ''))
        return 'history_before must be a positive integer below 2^63';
      if (!isOpaqueId(r.access_id ?? '')) return 'transcript requires a 32-character access_id';
      return null;
    default:
      // The other actions carry no free-form values beyond the byte limits checked above.
      return null;
  }
}

/** Required shape per action: which of session, text, project and installation it takes. */
function checkShape(r: EdgeAgentRequest, spec: ActionSpec): ValidationResult {
  const problem = shapeProblem(r, spec);
  return problem === null ? OK : fail(problem);
}

function shapeProblem(r: EdgeAgentRequest, spec: ActionSpec): string | null {
  const { action } = r;
  const sessionId = r.session_id ?? '';
  const accessId = r.access_id ?? '';
  const noSession = sessionId === '';
  const noText = (r.text ?? '') === '';
  const noProject = (r.project ?? '') === '';
  const noInstallation = (r.installation_id ?? '') === '';
  const noTextProjectOrInstallation = `${action} takes no text, project or installation`;
  const sessionless = () =>
    !noSession || !noText || !noProject || !noInstallation
      ? `${action} takes no session, text, project or installation`
      : null;
  switch (action) {
    case 'sessions':
      if (!isOpaqueId(accessId)) return 'sessions requires a 32-character access_id';
      return sessionless();
    case 'start':
      if (!isOpaqueId(r.installation_id ?? '')) return 'start requires a 32-character installation_id';
      if (noProject) return 'start requires a project';
      return !noSession || !noText ? 'start takes no session or text' : null;
    case 'resume':
      if (!isOpaqueId(sessionId)) return 'resume requires a 32-character session_id';
      if (!isOpaqueId(accessId)) return 'resume requires a 32-character access_id';
      return !noText || !noProject || !noInstallation ? noTextProjectOrInstallation : null;
    case 'send':
      if (!isOpaqueId(sessionId)) return 'send requires a 32-character session_id';
      if (noText && (r.attachments ?? []).length === 0) return 'send requires text or an attachment';
      return !noProject || !noInstallation ? 'send takes no project or installation' : null;
    case 'dispatch_status':
      // Its session is checked with its dispatch id, in the RPC envelope (validateRpcEnvelope).
      return null;
    default:
      if (spec.file && !isOpaqueId(accessId)) return `${action} requires a 32-character access_id`;
      // An action of the table that names no session (discover, directories) takes none of them.
      if (!spec.file && !spec.session) return sessionless();
      if (!isOpaqueId(sessionId)) return `${action} requires a 32-character session_id`;
      if (!noText || !noProject || !noInstallation) return noTextProjectOrInstallation;
      // `file` is defined here: checked above for every file action.
      return spec.file ? checkFileShape(action as FileAction, r.file as AgentFileOperation) : null;
  }
}

/** The edge's envelope checks (reference §2.2 "Edge-side envelope checks"), in its order. */
export function validateRpcEnvelope(rpc: EdgeAgentRPCRequest): ValidationResult {
  const action = rpc.request.action;
  if ((rpc.reset_revision ?? 0) !== 0 && action !== 'send') {
    return fail('reset_revision is only allowed with send');
  }
  if (rpc.dispatch_id !== undefined && !isOperationAction(action) && action !== 'dispatch_status') {
    return fail('dispatch_id is only allowed with the enveloped actions and dispatch_status');
  }
  if (action === 'dispatch_status' && (rpc.dispatch_id === undefined || !rpc.request.session_id)) {
    return fail('dispatch_status needs dispatch_id and session_id');
  }
  if (rpc.version !== EDGE_AGENT_RPC_VERSION) return fail(`version must be ${EDGE_AGENT_RPC_VERSION}`);
  if (rpc.actor_id === '' || rpc.actor_id.length > ACTOR_ID_MAX_LENGTH) {
    return fail(`actor_id must be 1 to ${ACTOR_ID_MAX_LENGTH} characters`);
  }
  // Not in the reference's list, but project_root obeys the project bound like `project` does.
  if (exceedsBytes(rpc.project_root ?? '', PROJECT_MAX_BYTES)) {
    return fail(`project_root exceeds ${PROJECT_MAX_BYTES} bytes`);
  }
  const request = validateEdgeAgentRequest(rpc.request);
  if (!request.ok) return request;
  if ((rpc.resume !== undefined) !== (action === 'resume')) {
    return fail('resume state must be present exactly for resume');
  }
  return OK;
}
