import { checkApproval, checkInputRequest, mapNotification } from './codex-events.js';

const T = 'thread-1';

describe('mapNotification', () => {
  it('ignores other threads', () => {
    expect(
      mapNotification('item/agentMessage/delta', { threadId: 'x', turnId: 't', itemId: 'i', delta: 'a' }, T),
    ).toEqual([]);
  });

  it('maps message deltas, command items and turn completion', () => {
    expect(
      mapNotification('item/agentMessage/delta', { threadId: T, turnId: 't', itemId: 'i', delta: 'hi' }, T),
    ).toEqual([{ type: 'message_delta', turnId: 't', itemId: 'i', text: 'hi' }]);
    const item = {
      type: 'commandExecution',
      id: 'call_1',
      command: 'ls',
      cwd: '/p',
      status: 'completed',
      aggregatedOutput: 'a\n',
      exitCode: 0,
      durationMs: -3,
    };
    expect(mapNotification('item/completed', { threadId: T, turnId: 't', item }, T)).toEqual([
      {
        type: 'activity',
        turnId: 't',
        activity: {
          nativeId: 'call_1',
          kind: 'commandExecution',
          status: 'completed',
          command: 'ls',
          cwd: '/p',
          output: 'a\n',
          exitCode: 0,
          durationMs: 0,
        },
      },
    ]);
    expect(
      mapNotification('turn/completed', { threadId: T, turn: { id: 't', status: 'failed' } }, T),
    ).toEqual([{ type: 'turn_completed', turnId: 't', status: 'failed' }]);
  });

  it('maps file changes with their kinds and drops unknown kinds', () => {
    const item = {
      type: 'fileChange',
      id: 'c',
      status: 'inProgress',
      changes: [
        { path: '/p/a', kind: { type: 'update', move_path: '/p/b' }, diff: '@@' },
        { path: '/p/c', kind: { type: 'weird' }, diff: '' },
      ],
    };
    const [event] = mapNotification('item/started', { threadId: T, turnId: 't', item }, T);
    expect(event).toEqual({
      type: 'activity',
      turnId: 't',
      activity: {
        nativeId: 'c',
        kind: 'fileChange',
        status: 'running',
        changes: [{ path: '/p/a', kind: 'update', diff: '@@', movePath: '/p/b' }],
      },
    });
  });
});

describe('mapNotification', () => {
  it('never projects user or agent message items, nor reasoning text', () => {
    expect(
      mapNotification(
        'item/started',
        { threadId: T, turnId: 't', item: { type: 'userMessage', id: 'u' } },
        T,
      ),
    ).toEqual([]);
    const [reasoning] = mapNotification(
      'item/completed',
      { threadId: T, turnId: 't', item: { type: 'reasoning', id: 'r', summary: ['secret'] } },
      T,
    );
    expect(reasoning).toEqual({
      type: 'activity',
      turnId: 't',
      activity: { nativeId: 'r', kind: 'reasoning', status: 'ended' },
    });
  });
});

describe('checkApproval', () => {
  const base = {
    threadId: T,
    turnId: 't',
    itemId: 'call_1',
    kind: 'command',
    command: 'rm -rf x',
    cwd: '/p',
  };

  it('accepts a plain command request', () => {
    expect(checkApproval('item/commandExecution/requestApproval', 0, base, T)).toEqual({
      ok: true,
      event: {
        type: 'approval_request',
        turnId: 't',
        nativeId: 0,
        kind: 'command',
        itemId: 'call_1',
        command: 'rm -rf x',
        cwd: '/p',
      },
    });
  });

  it.each([
    ['a blank command', { ...base, command: '  ' }],
    ['network context', { ...base, networkApprovalContext: { host: 'x' } }],
    ['another thread', { ...base, threadId: 'other' }],
    ['oversize params', { ...base, reason: 'x'.repeat(40_000) }],
    ['stdin kind', { ...base, kind: 'writeStdin' }],
  ])('fails closed on %s', (_name, params) => {
    expect(checkApproval('item/commandExecution/requestApproval', 1, params, T).ok).toBe(false);
  });

  it('fails closed on a file change asking for a root grant', () => {
    expect(
      checkApproval(
        'item/fileChange/requestApproval',
        'a',
        { threadId: T, turnId: 't', itemId: 'c', grantRoot: '/' },
        T,
      ).ok,
    ).toBe(false);
  });
});

describe('checkInputRequest', () => {
  const question = {
    id: 'q',
    header: 'H',
    question: 'Go?',
    isOther: true,
    isSecret: false,
    options: [{ label: 'Yes', description: 'ok' }],
  };

  it('maps a valid request', () => {
    expect(
      checkInputRequest('r1', { threadId: T, turnId: 't', itemId: 'i', questions: [question] }, T),
    ).toEqual({
      ok: true,
      event: {
        type: 'input_request',
        turnId: 't',
        nativeId: 'r1',
        itemId: 'i',
        questions: [
          {
            id: 'q',
            header: 'H',
            question: 'Go?',
            is_other: true,
            options: [{ label: 'Yes', description: 'ok' }],
          },
        ],
      },
    });
  });

  it('refuses duplicate question ids and too many questions', () => {
    expect(
      checkInputRequest(1, { threadId: T, turnId: 't', itemId: 'i', questions: [question, question] }, T).ok,
    ).toBe(false);
    const many = [1, 2, 3, 4].map((n) => ({ ...question, id: `q${n}` }));
    expect(checkInputRequest(1, { threadId: T, turnId: 't', itemId: 'i', questions: many }, T).ok).toBe(
      false,
    );
  });
});
