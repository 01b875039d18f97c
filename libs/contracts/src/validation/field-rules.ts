// Checks of single request fields (answers, attachments, file ops, paging values).
import { type FileAction } from '../actions.js';
import { type AgentFileOperation, type InputAnswer } from '../edge-agent.js';
import {
  ANSWER_MAX_BYTES,
  ANSWERS_MAX,
  ANSWERS_MIN,
  ATTACHMENT_PATH_MAX_BYTES,
  ATTACHMENTS_MAX,
  FILE_CHUNK_MAX_BYTES,
  FILE_NAME_MAX_BYTES,
  FILE_PATH_MAX_BYTES,
  FILE_SIZE_MAX_BYTES,
  HISTORY_PAGE_MAX,
  QUESTION_ID_MAX_BYTES,
} from '../limits.js';

import {
  exceedsBytes,
  hasControlChars,
  isBlank,
  isOpaqueId,
  isValidUtf8,
  significantDigits,
  INT63_MAX_DECIMAL,
  base64DecodedLength,
} from './predicates.js';

export function isHistoryPage(s: string): boolean {
  const digits = significantDigits(s, String(HISTORY_PAGE_MAX));
  if (digits === null) return false;
  const page = Number(digits);
  return page >= 1 && page <= HISTORY_PAGE_MAX;
}

export function isHistoryBefore(s: string): boolean {
  const digits = significantDigits(s, INT63_MAX_DECIMAL);
  return digits !== null && digits !== '0';
}

function isFileOffset(n: number | undefined): boolean {
  return n === undefined || (Number.isInteger(n) && n >= 0 && n <= FILE_SIZE_MAX_BYTES);
}

export function checkAnswers(answers: readonly InputAnswer[]): string | null {
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

export function checkAttachments(attachments: readonly string[]): string | null {
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

export function checkFileLimits(file: AgentFileOperation): string | null {
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
export function checkFileShape(action: FileAction, file: AgentFileOperation): string | null {
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
