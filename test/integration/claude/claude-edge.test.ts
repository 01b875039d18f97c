// The edge connector with TETHER_AGENT=claude, driven only through edge_agent_v1 over the shared
// NATS: the real `claude` CLI against the project's scripted Messages-API fake. A raw responder
// stands in for the router's session-update subject. Every test boots its own edge with its own
// data (and so Claude Code state) directory, project and provider.
import { jest } from '@jest/globals';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { type EdgeAgentResult } from '#contracts';
import { type RunningEdge } from '../../../apps/edge-connector/src/app.js';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/index.js';
import { claudeBinary, claudeEdgeEnv, WAIT_MS } from './claude-harness.js';
import {
  AgentEdgeBus,
  tearDownCase,
  expectOneOfTwoKilled,
  expectResumedAfterRestart,
  childrenIn,
  clientSteps,
  lastAssistant,
  WHICH_ONE,
  REMEMBER_SWORDFISH,
  caseDirs,
} from '../../support/edge.js';
import {
  expectApprovedThenDeclined,
  expectQuestionAnswered,
  expectModelChosen,
  expectStreamedReply,
} from '../edge/prompt-scenarios.js';

jest.setTimeout(120_000);

const EDGE_ID = '4646';
const MiB = 1024 * 1024;

const bus = new AgentEdgeBus(EDGE_ID, 'claudeedge');

beforeAll(() => bus.open());
afterAll(() => bus.close());

interface Case {
  base: string;
  project: string;
  dataDir: string;
  provider: FakeAnthropic;
  edge: RunningEdge;
}

let current: Case;

function bootEdge(c: Omit<Case, 'edge'>): Promise<RunningEdge> {
  return bus.start(
    {
      TETHER_AGENT: 'claude',
      TETHER_EDGE_DATA_DIR: c.dataDir,
      TETHER_CLAUDE_PATH: claudeBinary(),
      ...claudeEdgeEnv(c.provider, path.join(c.base, 'home')),
    },
    WAIT_MS,
  );
}

beforeEach(async () => {
  const provider = await startFakeAnthropic();
  const c = { ...(await caseDirs('claude-edge')), provider };
  current = { ...c, edge: await bootEdge(c) };
});

afterEach(() => tearDownCase(current));

async function start(project = current.project): Promise<EdgeAgentResult> {
  const started = await bus.startSession('claude', project);
  expect(started).toMatchObject({ status: 'ok', revision: 1, project });
  // Absent means false: Claude Code sessions offer no `permissions` (reference §3).
  expect(started.permissions_available).toBeFalsy();
  expect(started.thread_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  return started;
}

/** Watches, as a client would (bounded by WAIT_MS), until a condition holds or the turn is over. */
const { rpc, on, watch, untilIdle, send } = clientSteps(bus, WAIT_MS);
const steps = { start, send, watch, untilIdle };

describe('edge connector driving the real Claude Code CLI', () => {
  it('streams a reply, then lists the models and switches to one for the next turn', async () => {
    const reply = 'Hello from the scripted Messages API, streamed in several pieces to the edge.';
    current.provider.script({ kind: 'text', text: reply }, { kind: 'text', text: 'second' });
    const started = await start();
    const id = started.session_id!;
    expect(started.agent_version).toMatch(/^\d+\.\d+\.\d+$/);

    await expectStreamedReply(bus, { send, untilIdle }, id, reply);
    const firstModel = current.provider.requests.find((request) => request.step === 'text')?.model;

    const models = await expectModelChosen(bus, { send, untilIdle }, id, 'sonnet');
    expect(models.models!.map((model) => model.id)).toEqual(expect.arrayContaining(['default', 'sonnet']));
    const switched = current.provider.requests.filter((request) => request.step === 'text').at(-1)?.model;
    expect(switched).toMatch(/sonnet/);
    expect(switched).not.toBe(firstModel);
  });

  it('runs a command once it is approved and not when it is declined', async () => {
    const approved = path.join(current.project, 'approved.txt');
    const declined = path.join(current.project, 'declined.txt');
    current.provider.script(
      { kind: 'shell', command: `touch ${approved}`, description: 'Create approved.txt' },
      { kind: 'text', text: 'made it' },
      { kind: 'shell', command: `touch ${declined}` },
      { kind: 'text', text: 'did not make it' },
    );
    await expectApprovedThenDeclined(bus, steps, {
      prompts: ['make approved.txt', 'make declined.txt'],
      replies: ['made it', 'did not make it'],
      expectAsked: (approval) =>
        expect(approval).toMatchObject({
          kind: 'command',
          command: `touch ${approved}`,
          directory: current.project,
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
    expect(current.provider.requests.at(-1)).toMatchObject({ afterTool: true, lastToolError: true });
  });

  it('asks the user through AskUserQuestion and forwards the answer', async () => {
    current.provider.script(
      { kind: 'question', questions: [WHICH_ONE] },
      { kind: 'text', text: 'Right it is.' },
    );
    await expectQuestionAnswered(bus, steps, { questionId: 'q1', exact: true, refusesOtherAnswers: true });
    // The answer reached the model as a tool result, not an error.
    expect(current.provider.requests.at(-1)).toMatchObject({ afterTool: true, lastToolError: false });
  });

  it('interrupts a running turn and keeps the session open', async () => {
    current.provider.script(
      { kind: 'hang', text: 'Thinking about it for a long while' },
      { kind: 'text', text: 'ok' },
    );
    const { session_id: id } = await start();

    await send(id!, 'take your time');
    await watch(id!, (s) => lastAssistant(s).length > 0, 'the first reply');
    expect((await rpc({ action: 'interrupt', ...on(id!) })).status).toBe('ok');
    const done = await untilIdle(id!);
    expect(done.status).toBe('ok');
    expect(done.closed).toBeFalsy();
    await send(id!, 'again');
    expect(lastAssistant(await untilIdle(id!))).toBe('ok');
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
    current.provider.script(...REMEMBER_SWORDFISH);
    await expectResumedAfterRestart(bus, {
      start,
      send,
      untilIdle,
      project: current.project,
      stopEdge: () => current.edge.close(),
      bootEdge: async () => {
        current.edge = await bootEdge(current);
      },
    });
    // The provider received the earlier conversation with the new turn.
    const turns = current.provider.requests.filter((request) => request.step === 'text');
    expect(turns).toHaveLength(2);
    expect(turns[1]!.userMessages).toBe(turns[0]!.userMessages + 1);
  });

  it('closes a session whose Claude Code process dies mid-turn and leaves the others running', async () => {
    current.provider.script({ kind: 'hang', text: 'Working on it' }, { kind: 'text', text: 'still here' });
    await expectOneOfTwoKilled({ ...steps, base: current.base, project: current.project });
  });

  it('closes only the session whose CLI sends an oversize frame; the edge keeps serving', async () => {
    // A hostile provider: one 3 MiB text delta, which Claude Code forwards as one stream-json line.
    current.provider.script({ kind: 'text', text: 'x'.repeat(3 * MiB), chunkChars: 3 * MiB });
    const { session_id: flooded } = await start();
    await send(flooded!, 'flood');
    const closed = await watch(flooded!, (s) => Boolean(s.closed), 'the flooded session to close');
    expect(closed.status).toBe('session_closed');
    expect(closed.running).toBeFalsy();
    // The CLI that broke the protocol is killed, not left running.
    const deadline = Date.now() + WAIT_MS;
    while (childrenIn(current.project).length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(childrenIn(current.project)).toEqual([]);

    current.provider.script({ kind: 'text', text: 'fine' });
    const { session_id: next } = await start();
    await send(next!, 'hello');
    expect(lastAssistant(await untilIdle(next!))).toBe('fine');
  });
});
