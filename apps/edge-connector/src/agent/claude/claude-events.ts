// Claude Code's stream-json content → neutral activity and interaction shapes. Pure functions: the
// session keeps the turn state and decides what to emit or answer.
import type { InputQuestion } from '#contracts';
import type { NativeActivity } from '../agent-driver.js';
import { checkOptions, validHeader, within } from '../input-questions.js';
import {
  APPROVAL_COMMAND_MAX_CHARS,
  APPROVAL_PARAMS_MAX_BYTES,
  INPUT_PARAMS_MAX_BYTES,
  INPUT_QUESTION_TEXT_MAX_CHARS,
  INPUT_QUESTIONS_MAX,
  NATIVE_ID_MAX_CHARS,
} from '../prompt-limits.js';
import type { JsonObject } from './claude-stream.js';

export const BASH_TOOL = 'Bash';
export const QUESTION_TOOL = 'AskUserQuestion';

const FILE_TOOLS = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit']);
const WEB_TOOLS = new Set(['WebSearch', 'WebFetch']);

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
export const validNativeId = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= NATIVE_ID_MAX_CHARS;
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/** The activity kind a Claude Code tool shows as; AskUserQuestion shows as its input request. */
export function toolKind(name: string): string | undefined {
  if (name === QUESTION_TOOL) return undefined;
  if (name === BASH_TOOL) return 'commandExecution';
  if (FILE_TOOLS.has(name)) return 'fileChange';
  if (WEB_TOOLS.has(name)) return 'webSearch';
  if (name.startsWith('mcp__')) return 'mcpToolCall';
  return 'dynamicToolCall';
}

/** A `tool_use` block as a running activity; only Bash shows what it runs. */
export function toolStarted(
  id: string,
  name: string,
  input: unknown,
  cwd: string,
): NativeActivity | undefined {
  const kind = toolKind(name);
  if (!kind || !validNativeId(id)) return undefined;
  const activity: NativeActivity = { nativeId: id, kind, status: 'running' };
  const command = isObject(input) ? str(input.command) : undefined;
  if (kind === 'commandExecution' && command !== undefined) {
    activity.command = command;
    activity.cwd = cwd;
  }
  return activity;
}

/** The text of a `tool_result` block: a string, or the text parts of a content list. */
export function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isObject)
    .map((part) => (part.type === 'text' ? (str(part.text) ?? '') : ''))
    .join('');
}

/** Claude Code reports a failed command as `Exit code N` at the head of the result. */
export function bashExitCode(isError: boolean, text: string): number | null {
  if (!isError) return 0;
  const match = /^Exit code (\d{1,3})\b/.exec(text);
  return match ? Number(match[1]) : null;
}

export type BashCheck = { ok: true; command: string; reason?: string } | { ok: false; reason: string };

/** A Bash permission question the edge can show faithfully, or why it is denied unasked. */
export function checkBashApproval(input: unknown): BashCheck {
  if (!isObject(input)) return { ok: false, reason: 'input_invalid' };
  if (jsonBytes(input) > APPROVAL_PARAMS_MAX_BYTES) return { ok: false, reason: 'input_too_large' };
  const command = str(input.command);
  if (!command || command.trim() === '' || command.length > APPROVAL_COMMAND_MAX_CHARS) {
    return { ok: false, reason: 'command_invalid' };
  }
  // Running outside Claude Code's own sandbox is extra permission the remote user cannot grant.
  if (input.dangerouslyDisableSandbox === true) return { ok: false, reason: 'extra_permissions' };
  const description = str(input.description);
  return { ok: true, command, ...(description ? { reason: description } : {}) };
}

export type QuestionCheck =
  { ok: true; questions: InputQuestion[]; texts: Map<string, string> } | { ok: false; reason: string };

/**
 * AskUserQuestion as the input card Codex questions produce [§3 input requests]. Claude's
 * questions have no ids; the card uses `q1`… and the answer goes back keyed by question text,
 * as Claude Code expects, so two questions with the same text are refused.
 */
export function checkQuestions(input: unknown): QuestionCheck {
  if (!isObject(input)) return { ok: false, reason: 'input_invalid' };
  if (jsonBytes(input) > INPUT_PARAMS_MAX_BYTES) return { ok: false, reason: 'input_too_large' };
  const raw = input.questions;
  if (!Array.isArray(raw) || raw.length < 1 || raw.length > INPUT_QUESTIONS_MAX) {
    return { ok: false, reason: 'questions_invalid' };
  }
  const questions: InputQuestion[] = [];
  const texts = new Map<string, string>();
  const seen = new Set<string>();
  for (const [index, q] of raw.entries()) {
    if (!isObject(q) || !within(q.question, 1, INPUT_QUESTION_TEXT_MAX_CHARS) || seen.has(q.question)) {
      return { ok: false, reason: 'question_invalid' };
    }
    seen.add(q.question);
    if (!validHeader(q.header)) return { ok: false, reason: 'header_invalid' };
    const options = checkOptions(q.options);
    if (!options) return { ok: false, reason: 'options_invalid' };
    const id = `q${index + 1}`;
    texts.set(id, q.question);
    questions.push({
      id,
      question: q.question,
      ...(typeof q.header === 'string' && q.header ? { header: q.header } : {}),
      ...(options.length ? { options } : {}),
    });
  }
  return { ok: true, questions, texts };
}
