import { checkOptions, checkQuestions, validHeader } from './input-questions.js';
import {
  INPUT_HEADER_MAX_CHARS,
  INPUT_OPTION_DESCRIPTION_MAX_CHARS,
  INPUT_OPTION_LABEL_MAX_CHARS,
  INPUT_OPTIONS_MAX,
  INPUT_QUESTION_ID_MAX_CHARS,
  INPUT_QUESTION_TEXT_MAX_CHARS,
} from './prompt-limits.js';

const question = { id: 'q1', question: 'Go?', header: 'H', options: [{ label: 'Yes' }] };

describe('checkQuestions', () => {
  it('accepts bounded questions and keeps what it checked', () => {
    const checked = checkQuestions([question, { id: 'q2', question: 'Why?', header: '' }]);
    expect(checked).toEqual({
      ok: true,
      questions: [
        { id: 'q1', question: 'Go?', header: 'H', options: [{ label: 'Yes' }], source: question },
        { id: 'q2', question: 'Why?', options: [], source: { id: 'q2', question: 'Why?', header: '' } },
      ],
    });
  });

  it('takes the typed questions a driver event carries', () => {
    expect(checkQuestions([{ id: 'q', question: 'Go?', is_secret: true, options: [] }]).ok).toBe(true);
  });

  it.each([
    ['no questions', [], 'questions_invalid'],
    ['four questions', [1, 2, 3, 4].map((n) => ({ ...question, id: `q${n}` })), 'questions_invalid'],
    ['a non-object', ['q'], 'questions_invalid'],
    ['a duplicate id', [question, question], 'question_id_invalid'],
    ['an empty id', [{ ...question, id: '' }], 'question_id_invalid'],
    ['a long id', [{ ...question, id: 'i'.repeat(INPUT_QUESTION_ID_MAX_CHARS + 1) }], 'question_id_invalid'],
    ['no text', [{ id: 'q' }], 'question_invalid'],
    [
      'long text',
      [{ ...question, question: 't'.repeat(INPUT_QUESTION_TEXT_MAX_CHARS + 1) }],
      'question_invalid',
    ],
    ['a long header', [{ ...question, header: 'h'.repeat(INPUT_HEADER_MAX_CHARS + 1) }], 'header_invalid'],
    ['a bad option', [{ ...question, options: [{ label: '' }] }], 'options_invalid'],
  ])('refuses %s', (_name, raw, reason) => {
    expect(checkQuestions(raw)).toEqual({ ok: false, reason });
  });
});

describe('checkOptions', () => {
  it('treats absent options as none and drops empty descriptions', () => {
    expect(checkOptions(undefined)).toEqual([]);
    expect(checkOptions(null)).toEqual([]);
    expect(
      checkOptions([
        { label: 'A', description: '' },
        { label: 'B', description: 'b' },
      ]),
    ).toEqual([{ label: 'A' }, { label: 'B', description: 'b' }]);
  });

  it('refuses duplicate, empty or long labels, long descriptions and too many options', () => {
    expect(checkOptions([{ label: 'A' }, { label: 'A' }])).toBeUndefined();
    expect(checkOptions([{ label: 'x'.repeat(INPUT_OPTION_LABEL_MAX_CHARS + 1) }])).toBeUndefined();
    expect(
      checkOptions([{ label: 'A', description: 'd'.repeat(INPUT_OPTION_DESCRIPTION_MAX_CHARS + 1) }]),
    ).toBeUndefined();
    expect(
      checkOptions(Array.from({ length: INPUT_OPTIONS_MAX + 1 }, (_, i) => ({ label: `o${i}` }))),
    ).toBeUndefined();
    expect(checkOptions('A')).toBeUndefined();
  });
});

describe('validHeader', () => {
  it('allows an absent or bounded header only', () => {
    expect(validHeader(undefined)).toBe(true);
    expect(validHeader(null)).toBe(true);
    expect(validHeader('')).toBe(true);
    expect(validHeader('h'.repeat(INPUT_HEADER_MAX_CHARS + 1))).toBe(false);
    expect(validHeader(3)).toBe(false);
  });
});
