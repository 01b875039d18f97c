import type { AgentEvent } from '../agent-driver.js';
import { PENDING_APPROVALS_MAX } from './claude-limits.js';
import type { JsonObject } from './claude-stream.js';
import { ClaudeTurns } from './claude-turns.js';

const SESSION = '11111111-2222-4333-8444-555555555555';

function setup(saved = true) {
  const events: AgentEvent[] = [];
  const answers: { id: string; response: JsonObject }[] = [];
  const refused: string[] = [];
  const turns = new ClaudeTurns({
    sessionId: SESSION,
    cwd: '/srv/project',
    saved,
    emit: (event) => events.push(event),
    respond: (id, response) => {
      answers.push({ id, response });
      return true;
    },
    refuse: (id) => {
      refused.push(id);
      return true;
    },
    foreign: () => void foreign.push(true),
  });
  const foreign: boolean[] = [];
  return { turns, events, answers, refused, foreign };
}

const ask = (
  requestId: string,
  toolName: string,
  input: JsonObject,
  toolUseId = `toolu_${requestId}`,
): JsonObject => ({
  type: 'control_request',
  request_id: requestId,
  request: { subtype: 'can_use_tool', tool_name: toolName, input, tool_use_id: toolUseId },
});

describe('ClaudeTurns', () => {
  it('maps streamed text, tool calls, their results and the result line of one turn', () => {
    const { turns, events } = setup();
    const turnId = turns.begin();
    const stream = (event: JsonObject, parent: string | null = null): JsonObject => ({
      type: 'stream_event',
      session_id: SESSION,
      parent_tool_use_id: parent,
      event,
    });
    turns.onMessage(stream({ type: 'message_start', message: { id: 'msg_1' } }));
    turns.onMessage(
      stream({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } }),
    );
    turns.onMessage(
      stream({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } }),
    );
    // A subagent's text stays inside its tool; another conversation's message is ignored.
    turns.onMessage(
      stream({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } }, 'toolu_9'),
    );
    turns.onMessage({
      type: 'assistant',
      session_id: 'other',
      message: { content: [{ type: 'tool_use', id: 'toolu_x', name: 'Bash' }] },
    });
    turns.onMessage({
      type: 'assistant',
      session_id: SESSION,
      message: { content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'false' } }] },
    });
    turns.onMessage({
      type: 'user',
      session_id: SESSION,
      message: {
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'Exit code 1\nno' },
        ],
      },
    });
    turns.onMessage({ type: 'result', subtype: 'success', is_error: false, session_id: SESSION });
    expect(events).toEqual([
      { type: 'message_delta', turnId, itemId: 'msg_1:0', text: 'Hel' },
      { type: 'message_delta', turnId, itemId: 'msg_1:0', text: 'lo' },
      {
        type: 'activity',
        turnId,
        activity: {
          nativeId: 'toolu_1',
          kind: 'commandExecution',
          status: 'running',
          command: 'false',
          cwd: '/srv/project',
        },
      },
      {
        type: 'activity',
        turnId,
        activity: {
          nativeId: 'toolu_1',
          kind: 'commandExecution',
          status: 'failed',
          output: 'Exit code 1\nno',
          exitCode: 1,
        },
      },
      { type: 'turn_completed', turnId, status: 'completed' },
    ]);
  });
});

describe('ClaudeTurns', () => {
  it('reports an interrupted turn as interrupted, and an error result as failed', () => {
    const { turns, events } = setup();
    const first = turns.begin();
    expect(turns.interrupting('turn-0')).toBe(false);
    expect(turns.interrupting(first)).toBe(true);
    turns.onMessage({
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      session_id: SESSION,
    });
    const second = turns.begin();
    turns.onMessage({ type: 'result', subtype: 'error_max_turns', is_error: true, session_id: SESSION });
    expect(events).toEqual([
      { type: 'turn_completed', turnId: first, status: 'interrupted' },
      { type: 'turn_completed', turnId: second, status: 'failed' },
    ]);
  });

  it('asks Bash approvals once and answers allow with the original input, or deny', () => {
    const { turns, events, answers } = setup();
    const turnId = turns.begin();
    turns.onMessage(ask('r1', 'Bash', { command: 'touch a', description: 'Make a' }));
    turns.onMessage(ask('r1', 'Bash', { command: 'touch a', description: 'Make a' }));
    expect(events).toEqual([
      {
        type: 'approval_request',
        turnId,
        nativeId: 'r1',
        kind: 'command',
        itemId: 'toolu_r1',
        command: 'touch a',
        cwd: '/srv/project',
        reason: 'Make a',
      },
    ]);
    expect(turns.answerApproval('r1', 'accept')).toBe(true);
    expect(turns.answerApproval('r1', 'accept')).toBe(false);
    turns.onMessage(ask('r2', 'Bash', { command: 'touch b' }));
    expect(turns.answerApproval('r2', 'decline')).toBe(true);
    expect(answers).toEqual([
      {
        id: 'r1',
        response: { behavior: 'allow', updatedInput: { command: 'touch a', description: 'Make a' } },
      },
      { id: 'r2', response: { behavior: 'deny', message: 'The user declined this action.' } },
    ]);
  });
});

describe('ClaudeTurns', () => {
  it('denies unasked: other tools, transient sessions, no turn, sandbox escapes, and beyond 32 pending', () => {
    const transient = setup(false);
    transient.turns.begin();
    transient.turns.onMessage(ask('t1', 'Bash', { command: 'ls' }));
    expect(transient.events).toEqual([]);
    expect(transient.answers[0]!.response).toMatchObject({ behavior: 'deny' });

    const { turns, events, answers, refused } = setup();
    turns.onMessage(ask('n1', 'Bash', { command: 'touch x' }));
    turns.begin();
    turns.onMessage(ask('w1', 'Write', { file_path: '/etc/passwd', content: '' }));
    turns.onMessage(ask('s1', 'Bash', { command: 'curl x', dangerouslyDisableSandbox: true }));
    turns.onMessage({ type: 'control_request', request_id: 'h1', request: { subtype: 'hook_callback' } });
    expect(events).toEqual([]);
    expect(answers.map((answer) => [answer.id, answer.response.behavior])).toEqual([
      ['n1', 'deny'],
      ['w1', 'deny'],
      ['s1', 'deny'],
    ]);
    expect(refused).toEqual(['h1']);

    for (let i = 0; i < PENDING_APPROVALS_MAX; i++)
      turns.onMessage(ask(`p${i}`, 'Bash', { command: `touch ${i}` }));
    expect(events).toHaveLength(PENDING_APPROVALS_MAX);
    turns.onMessage(ask('over', 'Bash', { command: 'touch over' }));
    expect(events).toHaveLength(PENDING_APPROVALS_MAX);
    expect(answers.at(-1)).toMatchObject({ id: 'over', response: { behavior: 'deny' } });
  });
});

describe('ClaudeTurns', () => {
  it('turns AskUserQuestion into a card and answers by question text; no answer denies', () => {
    const { turns, events, answers } = setup();
    const turnId = turns.begin();
    const input = {
      questions: [
        {
          question: 'Which?',
          header: 'Pick',
          options: [
            { label: 'A', description: 'a' },
            { label: 'B', description: 'b' },
          ],
          multiSelect: false,
        },
      ],
    };
    turns.onMessage(ask('q', 'AskUserQuestion', input));
    expect(events).toEqual([
      {
        type: 'input_request',
        turnId,
        nativeId: 'q',
        itemId: 'toolu_q',
        questions: [
          {
            id: 'q1',
            question: 'Which?',
            header: 'Pick',
            options: [
              { label: 'A', description: 'a' },
              { label: 'B', description: 'b' },
            ],
          },
        ],
      },
    ]);
    expect(turns.answerQuestion('q', { q1: ['B'] })).toBe(true);
    expect(answers[0]).toEqual({
      id: 'q',
      response: { behavior: 'allow', updatedInput: { ...input, answers: { 'Which?': 'B' } } },
    });
    turns.onMessage(ask('q2', 'AskUserQuestion', input));
    expect(turns.answerQuestion('q2', {})).toBe(true);
    expect(answers[1]).toMatchObject({ id: 'q2', response: { behavior: 'deny' } });
    // A question card the reference would not show is denied unasked.
    turns.onMessage(ask('q3', 'AskUserQuestion', { questions: [] }));
    expect(answers[2]).toMatchObject({ id: 'q3', response: { behavior: 'deny' } });
  });

  it('drops a cancelled question and tells the session', () => {
    const { turns, events } = setup();
    turns.begin();
    turns.onMessage(ask('r1', 'Bash', { command: 'touch a' }));
    turns.onMessage({ type: 'control_cancel_request', request_id: 'r1' });
    expect(events.at(-1)).toEqual({ type: 'request_resolved', nativeId: 'r1' });
    expect(turns.answerApproval('r1', 'accept')).toBe(false);
  });

  it('ends the session when the CLI reports another conversation than the bound one', () => {
    const { turns, foreign } = setup();
    turns.onMessage({ type: 'system', subtype: 'init', session_id: SESSION });
    expect(foreign).toEqual([]);
    turns.onMessage({ type: 'system', subtype: 'init', session_id: '99999999-2222-4333-8444-555555555555' });
    expect(foreign).toEqual([true]);
  });
});
