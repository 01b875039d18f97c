// The edge connector with TETHER_AGENT=claude, driven only through edge_agent_v1 over the shared
// NATS: the real `claude` CLI against the project's scripted Messages-API fake. A raw responder
// stands in for the router's session-update subject. Every test boots its own edge with its own
// data (and so Claude Code state) directory, project and provider.
import { jest } from '@jest/globals';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { agentEdgeSuite } from '../../support/agent-edge-suite.js';
import { startFakeAnthropic } from '../../support/fake-anthropic/index.js';
import { claudeBinary, claudeEdgeEnv, WAIT_MS } from './claude-harness.js';
import {
  childrenIn,
  lastAssistant,
  WHICH_ONE,
  REMEMBER_SWORDFISH,
  KILLED_MID_TURN,
} from '../../support/edge.js';

jest.setTimeout(120_000);

const MiB = 1024 * 1024;

const suite = agentEdgeSuite({
  agent: 'claude',
  edgeId: '4646',
  waitMs: WAIT_MS,
  prepare: async (dirs) => ({ ...dirs, provider: await startFakeAnthropic() }),
  env: (c) => ({
    TETHER_CLAUDE_PATH: claudeBinary(),
    ...claudeEdgeEnv(c.provider, path.join(c.base, 'home')),
  }),
  expectStarted: (started) => {
    // Absent means false: Claude Code sessions offer no `permissions` (reference §3).
    expect(started.permissions_available).toBeFalsy();
    expect(started.thread_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  },
});
const { rpc, on, watch, untilIdle, send, start } = suite;

describe('edge connector driving the real Claude Code CLI', () => {
  it('streams a reply, then lists the models and switches to one for the next turn', async () => {
    const reply = 'Hello from the scripted Messages API, streamed in several pieces to the edge.';
    suite.current.provider.script({ kind: 'text', text: reply }, { kind: 'text', text: 'second' });
    const started = await start();
    const id = started.session_id!;
    expect(started.agent_version).toMatch(/^\d+\.\d+\.\d+$/);

    await suite.expectStreamedReply(id, reply);
    const firstModel = suite.current.provider.requests.find((request) => request.step === 'text')?.model;

    const models = await suite.expectModelChosen(id, 'sonnet');
    expect(models.models!.map((model) => model.id)).toEqual(expect.arrayContaining(['default', 'sonnet']));
    const switched = suite.current.provider.requests
      .filter((request) => request.step === 'text')
      .at(-1)?.model;
    expect(switched).toMatch(/sonnet/);
    expect(switched).not.toBe(firstModel);
  });

  it('runs a command once it is approved and not when it is declined', async () => {
    const approved = path.join(suite.current.project, 'approved.txt');
    const declined = path.join(suite.current.project, 'declined.txt');
    suite.current.provider.script(
      { kind: 'shell', command: `touch ${approved}`, description: 'Create approved.txt' },
      { kind: 'text', text: 'made it' },
      { kind: 'shell', command: `touch ${declined}` },
      { kind: 'text', text: 'did not make it' },
    );
    await suite.expectApprovedThenDeclined({
      prompts: ['make approved.txt', 'make declined.txt'],
      replies: ['made it', 'did not make it'],
      expectAsked: (approval) =>
        expect(approval).toMatchObject({
          kind: 'command',
          command: `touch ${approved}`,
          directory: suite.current.project,
          reason: 'Create approved.txt',
        }),
      expectRan: (first) => {
        expect(existsSync(approved)).toBe(true);
        expect(first.activities?.find((a) => a.kind === 'commandExecution')).toMatchObject({
          status: 'completed',
          command: `touch ${approved}`,
          exit_code: 0,
        });
      },
      declinedFile: declined,
    });
    // The model was told: its last request carried the refusal as an error result.
    expect(suite.current.provider.requests.at(-1)).toMatchObject({ afterTool: true, lastToolError: true });
  });

  it('asks the user through AskUserQuestion and forwards the answer', async () => {
    suite.current.provider.script(
      { kind: 'question', questions: [WHICH_ONE] },
      { kind: 'text', text: 'Right it is.' },
    );
    await suite.expectQuestionAnswered({ questionId: 'q1', exact: true, refusesOtherAnswers: true });
    // The answer reached the model as a tool result, not an error.
    expect(suite.current.provider.requests.at(-1)).toMatchObject({ afterTool: true, lastToolError: false });
  });

  it('interrupts a running turn and keeps the session open', async () => {
    suite.current.provider.script(
      { kind: 'hang', text: 'Thinking about it for a long while' },
      { kind: 'text', text: 'ok' },
    );
    await suite.expectInterrupted('ok');
  });

  it('refuses attachments and permissions for Claude Code, as the reference does', async () => {
    const { session_id: id } = await start();
    const attached = await rpc({
      action: 'send',
      ...on(id!),
      text: 'see this',
      attachments: ['notes.txt'],
    });
    expect(attached.status).toBe('upgrade_required');
    expect((await rpc({ action: 'poll', ...on(id!) })).messages ?? []).toEqual([]);
    expect(
      (await rpc({ action: 'permissions', ...on(id!), permission_mode: 'workspace-write' })).status,
    ).toBe('upgrade_required');
  });

  it('resumes a session after an edge restart with the conversation intact', async () => {
    suite.current.provider.script(...REMEMBER_SWORDFISH);
    await suite.expectResumedAfterRestart();
    // The provider received the earlier conversation with the new turn.
    const turns = suite.current.provider.requests.filter((request) => request.step === 'text');
    expect(turns).toHaveLength(2);
    expect(turns[1]!.userMessages).toBe(turns[0]!.userMessages + 1);
  });

  it('closes a session whose Claude Code process dies mid-turn and leaves the others running', async () => {
    suite.current.provider.script(...KILLED_MID_TURN);
    await suite.expectOneOfTwoKilled();
  });

  it('closes only the session whose CLI sends an oversize frame; the edge keeps serving', async () => {
    // A hostile provider: one 3 MiB text delta, which Claude Code forwards as one stream-json line.
    suite.current.provider.script({ kind: 'text', text: 'x'.repeat(3 * MiB), chunkChars: 3 * MiB });
    const { session_id: flooded } = await start();
    await send(flooded!, 'flood');
    const closed = await watch(flooded!, (s) => Boolean(s.closed), 'the flooded session to close');
    expect(closed.status).toBe('session_closed');
    expect(closed.running).toBeFalsy();
    // The CLI that broke the protocol is killed, not left running.
    const deadline = Date.now() + WAIT_MS;
    while (childrenIn(suite.current.project).length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(childrenIn(suite.current.project)).toEqual([]);

    suite.current.provider.script({ kind: 'text', text: 'fine' });
    const { session_id: next } = await start();
    await send(next!, 'hello');
    expect(lastAssistant(await untilIdle(next!))).toBe('fine');
  });
});
