// The rules of reference §2.2 for an edge_agent request and the edge's RPC envelope checks.
import { actionSpec, type FileAction } from '../actions.js';
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
  const action = r.action;
  const spec = actionSpec(action);
  if (spec === undefined) return fail('unknown action');

  const installationId = r.installation_id ?? '';
  const project = r.project ?? '';
  const sessionId = r.session_id ?? '';
  const text = r.text ?? '';
  const skillId = r.skill_id ?? '';
  const accessId = r.access_id ?? '';
  const directory = r.directory ?? '';
  const workingDirectory = r.working_directory ?? '';
  const cursor = r.cursor ?? '';
  const model = r.model ?? '';
  const title = r.title ?? '';
  const historyPage = r.history_page ?? '';
  const approvalId = r.approval_id ?? '';
  const decision = r.decision ?? '';
  const permissionMode = r.permission_mode ?? '';
  const inputId = r.input_id ?? '';
  const answers = r.answers ?? [];
  const historyBefore = r.history_before ?? '';
  const attachments = r.attachments ?? [];
  const file = r.file;
  const isFileAction = spec.file;

  // Size limits.
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

  const envelope = validateEnvelope(r);
  if (!envelope.ok) return envelope;

  // Fields that must be empty unless the action matches.
  if (cursor !== '' && action !== 'watch') return fail('cursor is only allowed with watch');
  if (model !== '' && action !== 'model') return fail('model is only allowed with model');
  if (title !== '' && action !== 'rename') return fail('title is only allowed with rename');
  if (directory !== '' && action !== 'directories') return fail('directory is only allowed with directories');
  if (workingDirectory !== '' && action !== 'start')
    return fail('working_directory is only allowed with start');
  if (historyPage !== '' && action !== 'sessions') return fail('history_page is only allowed with sessions');
  if (historyBefore !== '' && action !== 'transcript') {
    return fail('history_before is only allowed with transcript');
  }
  if ((approvalId !== '' || decision !== '') && action !== 'approve') {
    return fail('approval_id and decision are only allowed with approve');
  }
  if (permissionMode !== '' && action !== 'permissions') {
    return fail('permission_mode is only allowed with permissions');
  }
  if ((inputId !== '' || answers.length > 0) && action !== 'answer') {
    return fail('input_id and answers are only allowed with answer');
  }
  if (skillId !== '' && action !== 'send') return fail('skill_id is only allowed with send');
  if (attachments.length > 0 && (action !== 'send' || accessId === '')) {
    return fail('attachments are only allowed with send on a saved access');
  }
  if (file !== undefined && !isFileAction) return fail('file is only allowed with file actions');
  if (file === undefined && isFileAction) return fail('file is required with file actions');

  // Value rules.
  if (accessId !== '' && !isOpaqueId(accessId)) return fail('access_id must be a 32-character id');
  if (skillId !== '' && !isOpaqueId(skillId)) return fail('skill_id must be a 32-character id');
  if (cursor !== '' && !isDecimalUint64(cursor)) return fail('cursor must be a decimal uint64');
  if (historyPage !== '' && !isHistoryPage(historyPage)) {
    return fail(`history_page must be an integer from 1 to ${HISTORY_PAGE_MAX}`);
  }
  switch (action) {
    case 'rename':
      if (!isValidUtf8(title)) return fail('title must be valid UTF-8');
      if (isBlank(title)) return fail('title must not be blank');
      if (runeCountExceeds(title, TITLE_MAX_RUNES))
        return fail(`title exceeds ${TITLE_MAX_RUNES} characters`);
      if (hasControlChars(title)) return fail('title must not contain control characters');
      break;
    case 'model':
      if (model === '') return fail('model is required');
      if (hasControlChars(model)) return fail('model must not contain control characters');
      break;
    case 'approve':
      if (!isOpaqueId(approvalId)) return fail('approval_id must be a 32-character id');
      if (!DECISION_SET.has(decision)) return fail('decision must be accept or decline');
      break;
    case 'permissions':
      if (!PERMISSION_MODE_SET.has(permissionMode)) {
        return fail('permission_mode must be read-only or workspace-write');
      }
      break;
    case 'answer': {
      if (!isOpaqueId(inputId)) return fail('input_id must be a 32-character id');
      const problem = checkAnswers(answers);
      if (problem !== null) return fail(problem);
      break;
    }
    case 'transcript':
      if (!isHistoryBefore(historyBefore)) {
        return fail('history_before must be a positive integer below 2^63');
      }
      if (!isOpaqueId(accessId)) return fail('transcript requires a 32-character access_id');
      break;
    default:
      // The other actions carry no free-form values beyond the byte limits checked above.
      break;
  }
  if (attachments.length > 0) {
    const problem = checkAttachments(attachments);
    if (problem !== null) return fail(problem);
  }
  if (file !== undefined) {
    const problem = checkFileLimits(file);
    if (problem !== null) return fail(problem);
  }

  // Required shape per action.
  const noSession = sessionId === '';
  const noText = text === '';
  const noProject = project === '';
  const noInstallation = installationId === '';
  switch (action) {
    case 'discover':
    case 'directories':
      if (!noSession || !noText || !noProject || !noInstallation) {
        return fail(`${action} takes no session, text, project or installation`);
      }
      break;
    case 'sessions':
      if (!isOpaqueId(accessId)) return fail('sessions requires a 32-character access_id');
      if (!noSession || !noText || !noProject || !noInstallation) {
        return fail('sessions takes no session, text, project or installation');
      }
      break;
    case 'start':
      if (!isOpaqueId(installationId)) return fail('start requires a 32-character installation_id');
      if (noProject) return fail('start requires a project');
      if (!noSession || !noText) return fail('start takes no session or text');
      break;
    case 'resume':
      if (!isOpaqueId(sessionId)) return fail('resume requires a 32-character session_id');
      if (!isOpaqueId(accessId)) return fail('resume requires a 32-character access_id');
      if (!noText || !noProject || !noInstallation)
        return fail('resume takes no text, project or installation');
      break;
    case 'send':
      if (!isOpaqueId(sessionId)) return fail('send requires a 32-character session_id');
      if (noText && attachments.length === 0) return fail('send requires text or an attachment');
      if (!noProject || !noInstallation) return fail('send takes no project or installation');
      break;
    case 'dispatch_status':
      // Its session is checked with its dispatch id, in the RPC envelope (validateRpcEnvelope).
      break;
    default:
      if (isFileAction) {
        if (!isOpaqueId(accessId)) return fail(`${action} requires a 32-character access_id`);
        if (!isOpaqueId(sessionId)) return fail(`${action} requires a 32-character session_id`);
        if (!noText || !noProject || !noInstallation) {
          return fail(`${action} takes no text, project or installation`);
        }
        // `file` is defined here: checked above for every file action.
        const problem = checkFileShape(action as FileAction, file as AgentFileOperation);
        if (problem !== null) return fail(problem);
      } else if (spec.session) {
        if (!isOpaqueId(sessionId)) return fail(`${action} requires a 32-character session_id`);
        if (!noText || !noProject || !noInstallation) {
          return fail(`${action} takes no text, project or installation`);
        }
      }
  }
  return OK;
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
