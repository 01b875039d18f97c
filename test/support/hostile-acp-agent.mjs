#!/usr/bin/env node
// A scripted hostile ACP agent for the bounds tests: it answers the handshake and session/new
// properly, then misbehaves as the prompt asks. Plain node, no dependencies.
//   oversize  a 3 MiB frame          invalid  a line that is not JSON
//   flood     10 000 updates at once unknown  unknown update kinds, then a normal reply
//   client    asks for fs/terminal   permissions  40 permission requests at once
//   stuck     streams once, then ignores session/cancel and never ends the turn
//   anything else: a short reply
// session/load answers at once and replays the conversation after the answer, as Gemini CLI does
// (a user chunk at once, the agent's reply 100 ms later); a prompt is answered only once that
// replay is out, so a client that took replayed updates for turn output would show them.
import { createInterface } from 'node:readline';

const write = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const update = (sessionId, update) => write({ method: 'session/update', params: { sessionId, update } });
const text = (sessionId, value) =>
  update(sessionId, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: value } });
const waiting = new Map();
/** Resolves once the replay of the last session/load has been written. */
let replayed = Promise.resolve();
let nextId = 1;
const ask = (method, params) =>
  new Promise((resolve) => {
    const id = 9000 + nextId++;
    waiting.set(id, resolve);
    write({ id, method, params });
  });

async function prompt(id, sessionId, said) {
  await replayed;
  if (said === 'oversize') {
    process.stdout.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x'.repeat(3 * 1024 * 1024) } } } })}\n`,
    );
    return;
  }
  if (said === 'stuck') {
    text(sessionId, 'working forever');
    return;
  }
  if (said === 'invalid') {
    process.stdout.write('this is not json\n');
    return;
  }
  if (said === 'flood') {
    let lines = '';
    for (let i = 0; i < 10_000; i++) {
      lines += `${JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '.' } } } })}\n`;
    }
    process.stdout.write(lines);
    return;
  }
  if (said === 'unknown') {
    for (let i = 0; i < 50; i++) update(sessionId, { sessionUpdate: `made_up_${i % 3}`, payload: i });
    text(sessionId, 'still fine');
  } else if (said === 'permissions') {
    const outcomes = { cancelled: 0, rejected: 0, allowed: 0 };
    for (let i = 0; i < 40; i++) {
      void ask('session/request_permission', {
        sessionId,
        toolCall: { toolCallId: `call-${i}`, title: `echo ${i}`, kind: 'execute', status: 'pending' },
        options: [
          { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
          { optionId: 'no', name: 'Reject', kind: 'reject_once' },
        ],
      }).then((answer) => {
        const outcome = answer.result?.outcome;
        if (outcome?.outcome === 'cancelled') outcomes.cancelled++;
        else if (outcome?.optionId === 'no') outcomes.rejected++;
        else outcomes.allowed++;
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    text(
      sessionId,
      `cancelled:${outcomes.cancelled} rejected:${outcomes.rejected} allowed:${outcomes.allowed}`,
    );
  } else if (said === 'client') {
    const read = await ask('fs/read_text_file', { sessionId, path: '/etc/passwd' });
    const term = await ask('terminal/create', { sessionId, command: 'id' });
    text(sessionId, `fs:${read.error?.code ?? 'allowed'} terminal:${term.error?.code ?? 'allowed'}`);
  } else {
    text(sessionId, 'hostile but polite');
  }
  write({ id, result: { stopReason: 'end_turn' } });
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.id !== undefined && message.method === undefined) {
    waiting.get(message.id)?.(message);
    return;
  }
  switch (message.method) {
    case 'initialize':
      write({ id: message.id, result: { protocolVersion: 1, agentCapabilities: { loadSession: true } } });
      return;
    case 'session/new':
      write({ id: message.id, result: { sessionId: `hostile-${process.pid}` } });
      return;
    case 'session/load': {
      const { sessionId } = message.params;
      write({ id: message.id, result: {} });
      update(sessionId, { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'hello' } });
      replayed = new Promise((resolve) =>
        setTimeout(() => {
          text(sessionId, 'replayed answer');
          resolve();
        }, 100),
      );
      return;
    }
    case 'session/prompt':
      void prompt(message.id, message.params.sessionId, message.params.prompt[0].text);
      return;
    default:
      if (message.id !== undefined) write({ id: message.id, error: { code: -32601, message: 'nope' } });
  }
});
