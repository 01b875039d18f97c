// The rules every edge_agent request obeys (reference §2.2), run by the api on the HTTP body and
// again by the edge on the RPC. The zod schemas (schemas.ts) only check types; everything that
// is a rule lives here, as plain loops: this runs on every poll/watch/send.
// Reasons are short and fixed: they never echo what the client sent.
import { actionSpec, type FileAction } from './actions.js';
import {
  APPROVAL_DECISIONS,
  EDGE_AGENT_RPC_VERSION,
  PERMISSION_MODES,
  type AgentFileOperation,
  type EdgeAgentRequest,
  type EdgeAgentRPCRequest,
  type InputAnswer,
} from './edge-agent.js';
import {
  ACTOR_ID_MAX_LENGTH,
  ANSWER_MAX_BYTES,
  ANSWERS_MAX,
  ANSWERS_MIN,
  ATTACHMENT_PATH_MAX_BYTES,
  ATTACHMENTS_MAX,
  CLIENT_OPERATION_ID_MAX_LENGTH,
  DIRECTORY_MAX_BYTES,
  FILE_CHUNK_MAX_BYTES,
  FILE_NAME_MAX_BYTES,
  FILE_PATH_MAX_BYTES,
  FILE_SIZE_MAX_BYTES,
  HISTORY_PAGE_MAX,
  INSTALLATION_ID_MAX_BYTES,
  MODEL_MAX_BYTES,
  OPAQUE_ID_LENGTH,
  PROJECT_MAX_BYTES,
  QUESTION_ID_MAX_BYTES,
  SESSION_ID_MAX_BYTES,
  TEXT_MAX_BYTES,
  TITLE_MAX_RUNES,
} from './limits.js';
import { isOperationAction, PAYLOAD_FINGERPRINT_PATTERN } from './operations.js';

export type ValidationResult = { ok: true } | { ok: false; reason: string };

const OK: ValidationResult = { ok: true };
function fail(reason: string): ValidationResult {
  return { ok: false, reason };
}

const PERMISSION_MODE_SET: ReadonlySet<string> = new Set(PERMISSION_MODES);
const DECISION_SET: ReadonlySet<string> = new Set(APPROVAL_DECISIONS);

/** 2^64 − 1 and 2^63 − 1, the largest uint64 and int64 in decimal. */
export const UINT64_MAX_DECIMAL = '18446744073709551615';
export const INT63_MAX_DECIMAL = '9223372036854775807';

// ---------------------------------------------------------------------------------------------
// Small predicates, shared with schemas.ts.

/**
 * The value of a decimal digit string without leading zeros, or null when `s` is not one or is
 * greater than `max` (a decimal without leading zeros). Signs, spaces and exponents are refused.
 */
function significantDigits(s: string, max: string): string | null {
  const n = s.length;
  if (n === 0) return null;
  let start = -1;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return null;
    if (start === -1 && c !== 48) start = i;
  }
  if (start === -1) return '0';
  const digits = start === 0 ? s : s.slice(start);
  if (digits.length > max.length) return null;
  if (digits.length === max.length && digits > max) return null;
  return digits;
}

/** A decimal uint64 (0 … 2^64−1); leading zeros allowed, as strconv.ParseUint does. */
export function isDecimalUint64(s: string): boolean {
  return significantDigits(s, UINT64_MAX_DECIMAL) !== null;
}

/** The canonical decimal of a uint64 string (leading zeros removed), or null. */
export function normalizeDecimalUint64(s: string): string | null {
  return significantDigits(s, UINT64_MAX_DECIMAL);
}

/**
 * A connector id as Tether keeps it inside: canonical decimal uint64 (no leading zeros, so one
 * edge has one subject), and not 0, which names no connector.
 */
export function isEdgeId(s: string): boolean {
  return s.length > 0 && s.charCodeAt(0) !== 48 && isDecimalUint64(s);
}

/**
 * An opaque id minted by Tether (session, access, installation, skill, approval, input,
 * transfer): exactly 32 characters from a subject- and key-safe alphabet. The reference only
 * checks the length; the alphabet is ours, because session ids end up in NATS subjects and
 * Redis keys, where `.`, `*`, `>`, `{` or spaces would change their meaning.
 */
export function isOpaqueId(s: string): boolean {
  if (s.length !== OPAQUE_ID_LENGTH) return false;
  for (let i = 0; i < OPAQUE_ID_LENGTH; i++) {
    const c = s.charCodeAt(i);
    const ok = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95;
    if (!ok) return false;
  }
  return true;
}

/** UTF-8 byte length above `max`, without encoding when the code-unit count already decides. */
export function exceedsBytes(s: string, max: number): boolean {
  if (s.length > max) return true;
  if (s.length * 3 <= max) return false;
  return Buffer.byteLength(s, 'utf8') > max;
}

/** Unicode control characters (category Cc: C0, DEL and C1), as Go's unicode.IsControl. */
export function hasControlChars(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/**
 * An identifier every store and log can hold as it is: 1..`maxLength` code units, well-formed
 * UTF-8 (no lone surrogate), no control character (Postgres text refuses NUL; control characters
 * forge log lines). A JWT `sub` is held to it at the door, audit ids before they are recorded.
 */
export function isStorableId(s: string, maxLength: number): boolean {
  return s.length > 0 && s.length <= maxLength && s.isWellFormed() && !hasControlChars(s);
}

/** A JS string is valid UTF-8 exactly when it has no lone surrogate. */
export function isValidUtf8(s: string): boolean {
  return s.isWellFormed();
}

function isBlank(s: string): boolean {
  return s.trim().length === 0;
}

function runeCountExceeds(s: string, max: number): boolean {
  if (s.length <= max) return false;
  let runes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one rune.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    if (++runes > max) return true;
  }
  return false;
}

function isBase64Char(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
}

/**
 * The decoded size of standard base64 (RFC 4648 §4 alphabet, padding optional, as protobuf JSON
 * accepts), or -1 when `s` is not base64.
 */
export function base64DecodedLength(s: string): number {
  let end = s.length;
  if (end > 0 && s.charCodeAt(end - 1) === 61) end--;
  if (end > 0 && s.charCodeAt(end - 1) === 61) end--;
  const padding = s.length - end;
  for (let i = 0; i < end; i++) {
    if (!isBase64Char(s.charCodeAt(i))) return -1;
  }
  const rest = end % 4;
  if (rest === 1) return -1;
  // Padding, when present, must complete the last quantum exactly.
  if (padding > 0 && (rest === 0 || rest + padding !== 4)) return -1;
  return Math.floor(end / 4) * 3 + (rest === 0 ? 0 : rest - 1);
}

function isHistoryPage(s: string): boolean {
  const digits = significantDigits(s, String(HISTORY_PAGE_MAX));
  if (digits === null) return false;
  const page = Number(digits);
  return page >= 1 && page <= HISTORY_PAGE_MAX;
}

function isHistoryBefore(s: string): boolean {
  const digits = significantDigits(s, INT63_MAX_DECIMAL);
  return digits !== null && digits !== '0';
}

function isFileOffset(n: number | undefined): boolean {
  return n === undefined || (Number.isInteger(n) && n >= 0 && n <= FILE_SIZE_MAX_BYTES);
}

// ---------------------------------------------------------------------------------------------

/** The rules of reference §2.2 for one request: sizes, allowed fields, values, per-action shape. */
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

function checkAnswers(answers: readonly InputAnswer[]): string | null {
  if (answers.length < ANSWERS_MIN || answers.length > ANSWERS_MAX) {
    return `answer takes ${ANSWERS_MIN} to ${ANSWERS_MAX} answers`;
  }
  for (let i = 0; i < answers.length; i++) {
    const answer = answers[i] as InputAnswer;
    const questionId = answer.question_id;
    if (questionId === '') return 'question_id is required';
    if (exceedsBytes(questionId, QUESTION_ID_MAX_BYTES))
      return `question_id exceeds ${QUESTION_ID_MAX_BYTES} bytes`;
    for (let j = 0; j < i; j++) {
      if ((answers[j] as InputAnswer).question_id === questionId) return 'question_id must be unique';
    }
    if (answer.answers.length !== 1) return 'each question takes exactly one answer';
    const value = answer.answers[0] as string;
    if (!isValidUtf8(value)) return 'answer must be valid UTF-8';
    if (exceedsBytes(value, ANSWER_MAX_BYTES)) return `answer exceeds ${ANSWER_MAX_BYTES} bytes`;
    if (isBlank(value)) return 'answer must not be blank';
  }
  return null;
}

function checkAttachments(attachments: readonly string[]): string | null {
  if (attachments.length > ATTACHMENTS_MAX) return `at most ${ATTACHMENTS_MAX} attachments`;
  for (let i = 0; i < attachments.length; i++) {
    const path = attachments[i] as string;
    if (path === '') return 'attachment path is required';
    if (exceedsBytes(path, ATTACHMENT_PATH_MAX_BYTES))
      return `attachment path exceeds ${ATTACHMENT_PATH_MAX_BYTES} bytes`;
    if (!isValidUtf8(path)) return 'attachment path must be valid UTF-8';
    if (hasControlChars(path)) return 'attachment path must not contain control characters';
    for (let j = 0; j < i; j++) {
      if (attachments[j] === path) return 'attachments must be unique';
    }
  }
  return null;
}

function checkFileLimits(file: AgentFileOperation): string | null {
  const path = file.path ?? '';
  if (exceedsBytes(path, FILE_PATH_MAX_BYTES)) return `file.path exceeds ${FILE_PATH_MAX_BYTES} bytes`;
  if (!isValidUtf8(path)) return 'file.path must be valid UTF-8';
  if (hasControlChars(path)) return 'file.path must not contain control characters';
  if (!isFileOffset(file.size)) return `file.size must be from 0 to ${FILE_SIZE_MAX_BYTES}`;
  if (!isFileOffset(file.offset)) return `file.offset must be from 0 to ${FILE_SIZE_MAX_BYTES}`;
  const data = file.data ?? '';
  if (data !== '') {
    const decoded = base64DecodedLength(data);
    if (decoded < 0) return 'file.data must be base64';
    if (decoded > FILE_CHUNK_MAX_BYTES) return `file.data exceeds ${FILE_CHUNK_MAX_BYTES} bytes`;
  }
  return null;
}

function isFileName(name: string): boolean {
  if (name === '' || name === '.' || name === '..') return false;
  if (exceedsBytes(name, FILE_NAME_MAX_BYTES)) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    // `/ \ :` would make a path, not a name (the reference); control characters are our addition.
    if (c === 47 || c === 92 || c === 58 || c < 0x20 || (c >= 0x7f && c <= 0x9f)) return false;
  }
  return isValidUtf8(name);
}

/** Which fields of `file` each file action takes (reference §2.2 "File op shape per action"). */
function checkFileShape(action: FileAction, file: AgentFileOperation): string | null {
  const hasPath = (file.path ?? '') !== '';
  const hasName = (file.name ?? '') !== '';
  const transferId = file.transfer_id ?? '';
  const hasTransfer = transferId !== '';
  const hasOffset = (file.offset ?? 0) !== 0;
  const hasSize = (file.size ?? 0) !== 0;
  const hasData = (file.data ?? '') !== '';
  switch (action) {
    case 'file_list':
      if (hasName || hasTransfer || hasOffset || hasSize || hasData) return 'file_list takes only a path';
      return null;
    case 'file_begin':
      if (!isFileName(file.name ?? '')) {
        return `file_begin requires a name of 1 to ${FILE_NAME_MAX_BYTES} bytes without / \\ : or control characters, not . or ..`;
      }
      if (hasPath || hasTransfer || hasData || hasOffset) return 'file_begin takes only a name and a size';
      return null;
    case 'file_write':
      if (!isOpaqueId(transferId)) return 'file_write requires a 32-character transfer_id';
      if (!hasData) return 'file_write requires data';
      if (hasPath || hasName || hasSize) return 'file_write takes only a transfer_id, an offset and data';
      return null;
    case 'file_commit':
    case 'file_cancel':
      if (!isOpaqueId(transferId)) return `${action} requires a 32-character transfer_id`;
      if (hasPath || hasName || hasSize || hasOffset || hasData) return `${action} takes only a transfer_id`;
      return null;
    case 'file_read':
      if (hasName || hasSize || hasData) return 'file_read takes a path or a transfer_id and an offset';
      if (hasPath) {
        if (hasTransfer || hasOffset) return 'file_read by path takes no transfer_id or offset';
        return null;
      }
      if (!isOpaqueId(transferId)) return 'file_read requires a path or a 32-character transfer_id';
      return null;
    default:
      return 'unknown file action';
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
