// The prompt commands a person types to drive the demo stack's scripted model servers by hand
// (`run:`, `escalate:`, `patch:`, `ask:`): each server turns them into its own API's tool call.
import { promptStep as claudeStep } from '../../support/fake-anthropic/index.js';
import { promptStep as codexStep } from '../../support/fake-provider/index.js';
import { promptCommand } from '../../support/fake-server.js';

const codexPrompt = (text: string) => ({
  input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }],
});
const claudePrompt = (text: string) => ({
  messages: [{ role: 'user', content: [{ type: 'text', text }] }],
});

describe('prompt commands of the scripted model servers', () => {
  it('reads a verb and the rest, and nothing else', () => {
    expect(promptCommand('  run: ls -la ')).toEqual({ verb: 'run', rest: 'ls -la' });
    expect(promptCommand('ask: which\none?')).toEqual({ verb: 'ask', rest: 'which\none?' });
    expect(promptCommand('please run: ls')).toBeUndefined();
    expect(promptCommand('run:')).toBeUndefined();
  });

  it('becomes a Codex tool call', () => {
    expect(codexStep(codexPrompt('escalate: touch x'))).toEqual({
      kind: 'shell',
      command: 'touch x',
      escalate: true,
      justification: 'Run this outside the sandbox?',
    });
    expect(codexStep(codexPrompt('patch: a.txt hello there'))).toEqual({
      kind: 'patch',
      patch: '*** Begin Patch\n*** Add File: a.txt\n+hello there\n*** End Patch\n',
    });
    expect(codexStep(codexPrompt('ask: ok?'))).toMatchObject({
      kind: 'question',
      questions: [{ id: 'answer', question: 'ok?', options: [{ label: 'Yes' }, { label: 'No' }] }],
    });
    expect(codexStep(codexPrompt('just chat'))).toBeUndefined();
  });

  it('becomes a Claude Code tool call', () => {
    expect(claudeStep(claudePrompt('run: ls'))).toEqual({ kind: 'shell', command: 'ls' });
    expect(claudeStep(claudePrompt('patch: b.txt'))).toEqual({
      kind: 'patch',
      path: 'b.txt',
      content: 'created by the fake provider',
    });
    expect(claudeStep(claudePrompt('ask: sure?'))).toMatchObject({
      kind: 'question',
      questions: [{ question: 'sure?', options: [{ label: 'Yes' }, { label: 'No' }] }],
    });
    expect(claudeStep(claudePrompt('hello'))).toBeUndefined();
  });
});
