import { EdgeStatusError } from '../common/edge-errors.js';
import { checkAnswers } from './prompt-actions.js';

const view = {
  id: 'v',
  questions: [
    { id: 'pick', question: 'Which?', options: [{ label: 'A' }, { label: 'B' }] },
    { id: 'free', question: 'Why?' },
  ],
};

describe('checkAnswers', () => {
  it('takes one answer per question', () => {
    const answers = checkAnswers(view, [
      { question_id: 'pick', answers: ['A'] },
      { question_id: 'free', answers: ['because'] },
    ]);
    expect([...answers]).toEqual([
      ['pick', 'A'],
      ['free', 'because'],
    ]);
  });

  it.each([
    ['a missing question', [{ question_id: 'pick', answers: ['A'] }]],
    [
      'two answers',
      [
        { question_id: 'pick', answers: ['A', 'B'] },
        { question_id: 'free', answers: ['x'] },
      ],
    ],
    [
      'a blank answer',
      [
        { question_id: 'pick', answers: ['A'] },
        { question_id: 'free', answers: [' '] },
      ],
    ],
    [
      'an unknown option',
      [
        { question_id: 'pick', answers: ['C'] },
        { question_id: 'free', answers: ['x'] },
      ],
    ],
    [
      'a repeated question',
      [
        { question_id: 'free', answers: ['x'] },
        { question_id: 'free', answers: ['y'] },
      ],
    ],
  ])('refuses %s', (_name, given) => {
    expect(() => checkAnswers(view, given)).toThrow(EdgeStatusError);
  });

  it('lets an is_other question take free text', () => {
    const other = {
      id: 'v',
      questions: [{ id: 'q', question: 'Which?', is_other: true, options: [{ label: 'A' }] }],
    };
    expect(checkAnswers(other, [{ question_id: 'q', answers: ['Z'] }]).get('q')).toBe('Z');
  });
});
