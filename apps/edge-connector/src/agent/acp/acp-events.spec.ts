import type { AgentEvent } from '../agent-driver.js';
import { AcpEventMapper } from './acp-events.js';

function mapper() {
  const events: AgentEvent[] = [];
  const unknown: string[] = [];
  const map = new AcpEventMapper(
    '/home/owner/project',
    (event) => events.push(event),
    (kind) => unknown.push(kind),
  );
  return { map, events, unknown };
}

const chunk = (kind: string, text: string) => ({ sessionUpdate: kind, content: { type: 'text', text } });

describe('AcpEventMapper', () => {
  it('streams text as one message per run of chunks, and thoughts as a reasoning activity', () => {
    const { map, events } = mapper();
    map.beginTurn('t1');
    map.update(chunk('agent_thought_chunk', 'hmm'));
    map.update(chunk('agent_thought_chunk', 'more'));
    map.update(chunk('agent_message_chunk', 'Hel'));
    map.update(chunk('agent_message_chunk', 'lo'));
    expect(events).toEqual([
      {
        type: 'activity',
        turnId: 't1',
        activity: { nativeId: 't1:r1', kind: 'reasoning', status: 'running' },
      },
      {
        type: 'activity',
        turnId: 't1',
        activity: { nativeId: 't1:r1', kind: 'reasoning', status: 'completed' },
      },
      { type: 'message_delta', turnId: 't1', itemId: 't1:m2', text: 'Hel' },
      { type: 'message_delta', turnId: 't1', itemId: 't1:m2', text: 'lo' },
    ]);
  });

  it('drops updates outside a turn (a load replay) and reports unknown kinds', () => {
    const { map, events, unknown } = mapper();
    map.update(chunk('agent_message_chunk', 'replayed'));
    map.update(chunk('user_message_chunk', 'replayed'));
    map.beginTurn('t1');
    map.update({ sessionUpdate: 'available_commands_update', availableCommands: [] });
    map.update({ sessionUpdate: 'made_up' });
    expect(events).toEqual([]);
    expect(unknown).toEqual(['made_up']);
  });
});

describe('AcpEventMapper', () => {
  it('maps tool calls to activities and keeps the kind for later updates', () => {
    const { map, events } = mapper();
    map.beginTurn('t1');
    map.update({
      sessionUpdate: 'tool_call',
      toolCallId: 'c1',
      title: 'ls',
      kind: 'execute',
      status: 'in_progress',
    });
    map.update({
      sessionUpdate: 'tool_call_update',
      toolCallId: 'c1',
      status: 'completed',
      content: [{ type: 'content', content: { type: 'text', text: 'a.txt' } }],
    });
    map.update({ sessionUpdate: 'tool_call_update', toolCallId: 'never-announced', status: 'completed' });
    expect(events).toEqual([
      {
        type: 'activity',
        turnId: 't1',
        activity: {
          nativeId: 'c1',
          kind: 'commandExecution',
          status: 'running',
          command: 'ls',
          cwd: '/home/owner/project',
        },
      },
      {
        type: 'activity',
        turnId: 't1',
        activity: {
          nativeId: 'c1',
          kind: 'commandExecution',
          status: 'completed',
          command: 'ls',
          cwd: '/home/owner/project',
          output: 'a.txt',
        },
      },
    ]);
  });

  it('makes the activity from a permission request when the agent sent no tool call', () => {
    const { map, events } = mapper();
    map.beginTurn('t1');
    const made = map.permissionActivity({
      toolCallId: 'p1',
      title: 'echo hi > x',
      kind: 'execute',
      status: 'pending',
    });
    expect(made).toEqual({ id: 'p1', state: { kind: 'commandExecution', command: 'echo hi > x' } });
    map.endTool('p1', 'declined');
    expect(events.map((event) => event.type === 'activity' && event.activity.status)).toEqual([
      'running',
      'declined',
    ]);
  });
});

describe('AcpEventMapper', () => {
  it('shows a diff for an edit', () => {
    const { map, events } = mapper();
    map.beginTurn('t1');
    map.permissionActivity({
      toolCallId: 'e1',
      title: 'write a.txt',
      kind: 'edit',
      content: [{ type: 'diff', path: '/home/owner/project/a.txt', oldText: 'old\n', newText: 'new\n' }],
    });
    expect(events[0]).toMatchObject({
      activity: {
        kind: 'fileChange',
        changes: [{ path: '/home/owner/project/a.txt', kind: 'update', diff: '-old\n+new' }],
      },
    });
  });

  it('refuses tool ids over the native id bound', () => {
    const { map, events } = mapper();
    map.beginTurn('t1');
    map.update({
      sessionUpdate: 'tool_call',
      toolCallId: 'x'.repeat(257),
      kind: 'execute',
      status: 'pending',
    });
    expect(events).toEqual([]);
  });
});
