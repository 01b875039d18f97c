import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileChange } from '#contracts';
import type { AgentEvent } from '../agent/agent-driver.js';
import { answerLines, approvalView, inputQuestions, PendingPrompts } from './pending-prompts.js';

let root: string;
let outside: string;
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'edge-prompts-')));
  outside = realpathSync(mkdtempSync(join(tmpdir(), 'edge-prompts-out-')));
  mkdirSync(join(root, 'src'));
  symlinkSync(outside, join(root, 'escape'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const fileEvent = {
  type: 'approval_request',
  turnId: 't',
  nativeId: 1,
  kind: 'file_change',
  itemId: 'i',
} as const;
const place = (changes: FileChange[] | undefined) => ({
  cwd: root,
  projectRoot: root,
  changesOf: () => changes,
});

describe('approvalView', () => {
  it('shows a command with its directory and a bounded reason', () => {
    const view = approvalView(
      { type: 'approval_request', turnId: 't', nativeId: 1, kind: 'command', command: 'ls', reason: 'look' },
      place(undefined),
    );
    expect(view).toMatchObject({ kind: 'command', command: 'ls', directory: root, reason: 'look' });
  });

  it('refuses a blank command', () => {
    const event = {
      type: 'approval_request',
      turnId: 't',
      nativeId: 1,
      kind: 'command',
      command: ' ',
    } as const;
    expect(approvalView(event, place(undefined))).toBeUndefined();
  });

  it('shows file changes that stay inside the project, new directories included', () => {
    const changes = [
      { path: 'src/a.ts', kind: 'update', diff: '+a' },
      { path: `${root}/new/dir/b.ts`, kind: 'add', diff: '+b' },
      { path: '..notes', kind: 'add', diff: '+c' },
    ];
    expect(approvalView(fileEvent, place(changes))).toMatchObject({ kind: 'file_change', changes });
  });

  it('refuses paths that leave the project, lexically or through a symlink', () => {
    for (const path of ['../x', '/etc/passwd', 'escape/x', '']) {
      expect(approvalView(fileEvent, place([{ path, kind: 'add', diff: '+' }]))).toBeUndefined();
    }
    const moved = [{ path: 'src/a.ts', kind: 'update', diff: '+', move_path: '../a.ts' }];
    expect(approvalView(fileEvent, place(moved))).toBeUndefined();
    expect(approvalView(fileEvent, place(undefined))).toBeUndefined();
  });
});

describe('inputQuestions', () => {
  const event: Extract<AgentEvent, { type: 'input_request' }> = {
    type: 'input_request',
    turnId: 't',
    nativeId: 1,
    itemId: 'i',
    questions: [{ id: 'q', question: 'Go\u200b?', options: [{ label: 'Yes' }] }],
  };

  it('cleans hidden characters and always lists options', () => {
    expect(inputQuestions({ ...event, questions: [{ id: 'q', question: 'Go\u200b?' }] })).toEqual([
      {
        id: 'q',
        header: undefined,
        question: 'Go?',
        is_other: undefined,
        is_secret: undefined,
        options: [],
      },
    ]);
  });

  it('refuses a missing or long item id and broken questions', () => {
    expect(inputQuestions({ ...event, itemId: '' })).toBeUndefined();
    expect(inputQuestions({ ...event, itemId: 'i'.repeat(257) })).toBeUndefined();
    expect(inputQuestions({ ...event, questions: [] })).toBeUndefined();
  });
});

describe('answerLines', () => {
  it('records each question with its answer, secrets hidden', () => {
    const view = {
      id: 'v',
      questions: [
        { id: 'a', question: 'Name?' },
        { id: 'b', question: 'Token?', is_secret: true },
      ],
    };
    expect(
      answerLines(
        view,
        new Map([
          ['a', 'Ann'],
          ['b', 's3cret'],
        ]),
      ),
    ).toBe('Name? → Ann\nToken? → [hidden]');
  });
});

describe('PendingPrompts', () => {
  it('finds, takes and resolves prompts by their native id', () => {
    const prompts = new PendingPrompts();
    const view = { id: 'v1', kind: 'command' as const, command: 'ls', directory: root };
    expect(prompts.addApproval(7, 't', view)).toBe(true);
    expect(prompts.hasApproval(7)).toBe(true);
    expect(prompts.hasInput(7)).toBe(false);
    prompts.addInput({ nativeId: 8, turnId: 't', activityNativeId: 'i', view: { id: 'v2' } });
    expect(prompts.approvalViews()).toEqual([view]);
    expect(prompts.resolve(8)).toMatchObject({ kind: 'input', viewId: 'v2' });
    expect(prompts.resolve(7)).toEqual({ kind: 'approval', viewId: 'v1' });
    expect(prompts.resolve(7)).toBeUndefined();
  });

  it('counts approvals and refuses one past the shown cards budget', () => {
    const view = (id: string, command = 'ls') => ({ id, kind: 'command' as const, command, directory: root });
    const prompts = new PendingPrompts();
    for (let i = 0; i < 8; i += 1) {
      expect(prompts.approvalsFull).toBe(false);
      expect(prompts.addApproval(i, 't', view(`v${i}`))).toBe(true);
    }
    expect(prompts.approvalsFull).toBe(true);
    const budget = new PendingPrompts();
    expect(budget.addApproval(1, 't', view('a', 'x'.repeat(100_000)))).toBe(true);
    expect(budget.addApproval(2, 't', view('b', 'x'.repeat(40_000)))).toBe(false);
    expect(budget.approvalViews().map((shown) => shown.id)).toEqual(['a']);
  });
});
