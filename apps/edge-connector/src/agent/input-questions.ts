// The question bounds of an input request (reference §3 "Input requests"). One check serves the
// drivers, which read untyped native JSON, and the session manager, which checks every driver's
// typed events again; so the check takes `unknown` and proves the shape as it goes.
import {
  INPUT_HEADER_MAX_CHARS,
  INPUT_OPTION_DESCRIPTION_MAX_CHARS,
  INPUT_OPTION_LABEL_MAX_CHARS,
  INPUT_OPTIONS_MAX,
  INPUT_QUESTION_ID_MAX_CHARS,
  INPUT_QUESTION_TEXT_MAX_CHARS,
  INPUT_QUESTIONS_MAX,
} from './prompt-limits.js';

type Fields = Record<string, unknown>;

export interface CheckedOption {
  label: string;
  description?: string;
}

export interface CheckedQuestion {
  id: string;
  question: string;
  /** Present only when not empty. */
  header?: string;
  options: CheckedOption[];
  /** The question as given, for the fields only one caller reads (Codex's `isOther`, say). */
  source: Fields;
}

export type QuestionsCheck = { ok: true; questions: CheckedQuestion[] } | { ok: false; reason: string };

const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const within = (value: unknown, min: number, max: number): value is string =>
  typeof value === 'string' && value.length >= min && value.length <= max;

/** An absent (undefined or null) header is fine; a present one must be a bounded string. */
export function validHeader(header: unknown): boolean {
  return header === undefined || header === null || within(header, 0, INPUT_HEADER_MAX_CHARS);
}

/** The options of one question (absent means none), or undefined when any bound is broken. */
export function checkOptions(raw: unknown): CheckedOption[] | undefined {
  const list = raw ?? [];
  if (!Array.isArray(list) || list.length > INPUT_OPTIONS_MAX) return undefined;
  const labels = new Set<string>();
  const options: CheckedOption[] = [];
  for (const option of list) {
    if (
      !isObject(option) ||
      !within(option.label, 1, INPUT_OPTION_LABEL_MAX_CHARS) ||
      labels.has(option.label)
    ) {
      return undefined;
    }
    labels.add(option.label);
    const description: unknown = option.description ?? undefined;
    if (description !== undefined && !within(description, 0, INPUT_OPTION_DESCRIPTION_MAX_CHARS))
      return undefined;
    options.push({ label: option.label, ...(description ? { description } : {}) });
  }
  return options;
}

function checkQuestion(raw: unknown, ids: Set<string>): CheckedQuestion | { reason: string } {
  if (!isObject(raw)) return { reason: 'questions_invalid' };
  if (!within(raw.id, 1, INPUT_QUESTION_ID_MAX_CHARS) || ids.has(raw.id))
    return { reason: 'question_id_invalid' };
  ids.add(raw.id);
  if (!within(raw.question, 1, INPUT_QUESTION_TEXT_MAX_CHARS)) return { reason: 'question_invalid' };
  if (!validHeader(raw.header)) return { reason: 'header_invalid' };
  const options = checkOptions(raw.options);
  if (!options) return { reason: 'options_invalid' };
  const header = typeof raw.header === 'string' && raw.header ? raw.header : undefined;
  return { id: raw.id, question: raw.question, ...(header ? { header } : {}), options, source: raw };
}

/** The questions of one input request with ids, or why they are refused. */
export function checkQuestions(raw: unknown): QuestionsCheck {
  if (!Array.isArray(raw) || raw.length < 1 || raw.length > INPUT_QUESTIONS_MAX) {
    return { ok: false, reason: 'questions_invalid' };
  }
  const ids = new Set<string>();
  const questions: CheckedQuestion[] = [];
  for (const entry of raw) {
    const checked = checkQuestion(entry, ids);
    if ('reason' in checked) return { ok: false, reason: checked.reason };
    questions.push(checked);
  }
  return { ok: true, questions };
}
