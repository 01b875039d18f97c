// The edge connector with TETHER_AGENT=codex, driven only through edge_agent_v1 over the shared
// NATS: the real `codex app-server` against the project's scripted Responses-API fake. A raw
// responder stands in for the router's session-update subject. Every test boots its own edge with
// its own CODEX_HOME, project, data directory and provider.
import { jest } from '@jest/globals';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { agentEdgeSuite } from '../../support/agent-edge-suite.js';
import {
  FAKE_API_KEY_ENV,
  FAKE_MODEL,
  prepareCodexHome,
  startFakeProvider,
} from '../../support/fake-provider/index.js';
import { codexBinary, WAIT_MS } from './codex-harness.js';
import { WHICH_ONE, REMEMBER_SWORDFISH, KILLED_MID_TURN, writeTwice } from '../../support/edge.js';

jest.setTimeout(60_000);

const suite = agentEdgeSuite({
  agent: 'codex',
  edgeId: '4343',
  waitMs: WAIT_MS,
  prepare: async (dirs) => {
    const provider = await startFakeProvider();
    const codexHome = path.join(dirs.base, 'codex-home');
    await prepareCodexHome(codexHome, provider);
    return { ...dirs, codexHome, provider };
  },
  env: (c) => {
    const proxy = `http://127.0.0.1:${c.provider.port}`;
    return {
      TETHER_CODEX_PATH: codexBinary(),
      TETHER_CODEX_HOME: c.codexHome,
      TETHER_CODEX_ENV_ALLOW: FAKE_API_KEY_ENV,
      PATH: process.env.PATH,
      HOME: path.join(c.base, 'home'),
      LANG: 'C.UTF-8',
      [FAKE_API_KEY_ENV]: 'fake-key',
      // Anything Codex tries to reach besides the provider lands on the fake, which refuses it.
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      NO_PROXY: '127.0.0.1,localhost',
    };
  },
  expectStarted: (started) => {
    expect(started).toMatchObject({ model: FAKE_MODEL });
    expect(started.thread_id).toMatch(/^[0-9a-f-]{36}$/);
  },
});
const { rpc, on, watch, untilIdle, send, start } = suite;

describe('edge connector driving the real Codex CLI', () => {
  it('streams a reply, then lists the models and selects one for the next turn', async () => {
    const reply = 'Hello from the scripted provider, streamed in several pieces to the edge.';
    suite.current.provider.script({ kind: 'text', text: reply }, { kind: 'text', text: 'second' });
    const { session_id: id } = await start();

    await suite.expectStreamedReply(id!, reply);

    const models = await suite.expectModelChosen(id!, FAKE_MODEL);
    expect(models.models).toEqual([{ id: FAKE_MODEL, name: 'Fake Model' }]);
    expect(suite.current.provider.requests.at(-1)?.model).toBe(FAKE_MODEL);
  });

  it('runs a command once it is approved and not when it is declined', async () => {
    const approved = path.join(suite.current.project, 'approved.txt');
    const declined = path.join(suite.current.project, 'declined.txt');
    suite.current.provider.script(
      { kind: 'shell', command: `echo approved > ${approved}`, escalate: true, justification: 'Write it?' },
      { kind: 'text', text: 'wrote it' },
      { kind: 'shell', command: `echo declined > ${declined}`, escalate: true },
      { kind: 'text', text: 'did not write it' },
    );
    await suite.expectApprovedThenDeclined({
      prompts: ['write approved.txt', 'write declined.txt'],
      replies: ['wrote it', 'did not write it'],
      expectAsked: (approval) => {
        expect(approval).toMatchObject({
          kind: 'command',
          directory: suite.current.project,
          reason: 'Write it?',
        });
        expect(approval.command).toContain('echo approved');
      },
      expectRan: async (first) => {
        expect(await readFile(approved, 'utf8')).toBe('approved\n');
        expect(first.activities?.find((a) => a.kind === 'commandExecution')).toMatchObject({
          status: 'completed',
          exit_code: 0,
        });
      },
      declinedFile: declined,
    });
  });

  it('shows a file change with its diff for approval, then applies it', async () => {
    const target = path.join(suite.current.project, 'patched.txt');
    suite.current.provider.script(
      {
        kind: 'patch',
        patch: `*** Begin Patch\n*** Add File: ${target}\n+hello from apply_patch\n*** End Patch\n`,
      },
      { kind: 'text', text: 'patched' },
    );
    const { session_id: id } = await start();

    await send(id!, 'patch it');
    const asking = await watch(id!, (s) => (s.approvals ?? []).length > 0, 'a file-change approval');
    const approval = asking.approvals![0]!;
    expect(approval).toMatchObject({ kind: 'file_change', directory: suite.current.project });
    expect(approval.changes).toEqual([
      expect.objectContaining({
        path: target,
        kind: 'add',
        diff: expect.stringContaining('hello from apply_patch'),
      }),
    ]);
    await rpc({ action: 'approve', ...on(id!), approval_id: approval.id, decision: 'accept' });
    const done = await untilIdle(id!);
    expect(await readFile(target, 'utf8')).toBe('hello from apply_patch\n');
    expect(done.activities?.find((a) => a.kind === 'fileChange')?.status).toBe('completed');
    expect(done.activities?.find((a) => a.kind === 'turnDiff')?.output).toContain('hello from apply_patch');
  });

  it('asks the user a question and forwards the answer to the agent', async () => {
    suite.current.provider.script(
      { kind: 'question', questions: [{ id: 'choice', ...WHICH_ONE }] },
      { kind: 'text', text: 'Right it is.' },
    );
    await suite.expectQuestionAnswered({
      questionId: 'choice',
      exact: false,
      refusesOtherAnswers: false,
    });
    expect(suite.current.provider.requests.at(-1)?.afterTool).toBe(true);
  });

  it('interrupts a running turn', async () => {
    suite.current.provider.script({ kind: 'hang', text: 'Thinking about it for a long while' });
    await suite.expectInterrupted();
  });

  it('blocks a write in read-only mode and allows it after permissions → workspace-write', async () => {
    const target = path.join(suite.current.project, 'written.txt');
    suite.current.provider.script(...writeTwice(target));
    const started = await start();
    const id = started.session_id!;
    expect(started).toMatchObject({ permission_mode: 'read-only', permissions_available: true });

    await send(id, 'write in read-only');
    await untilIdle(id);
    expect(existsSync(target)).toBe(false);
    expect(suite.current.provider.requests.find((request) => request.afterTool)?.lastToolExitCode).not.toBe(
      0,
    );

    const changed = await rpc({ action: 'permissions', ...on(id), permission_mode: 'workspace-write' });
    expect(changed).toMatchObject({ status: 'ok', permission_mode: 'workspace-write' });
    await send(id, 'write in workspace-write');
    const done = await untilIdle(id);
    expect(await readFile(target, 'utf8')).toBe('allowed\n');
    expect(done.approvals ?? []).toEqual([]);
  });

  it('resumes a session after an edge restart with the thread history intact', async () => {
    suite.current.provider.script(...REMEMBER_SWORDFISH);
    await suite.expectResumedAfterRestart({ permission_mode: 'read-only' });
    // The provider received the earlier conversation with the new turn.
    const [first, second] = suite.current.provider.requests;
    expect(second!.userMessages).toBeGreaterThan(first!.userMessages);
    expect(second!.inputItems).toBeGreaterThan(first!.inputItems);
  });

  it('closes a session whose Codex process dies mid-turn and leaves the others running', async () => {
    suite.current.provider.script(...KILLED_MID_TURN);
    await suite.expectOneOfTwoKilled();
  });
});
