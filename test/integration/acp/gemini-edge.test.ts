// The edge connector with TETHER_AGENT=acp driving the real Gemini CLI over ACP, only through
// edge_agent_v1 over the shared NATS, against the project's scripted fake of the Gemini API. Every
// test boots its own edge with its own agent home, project, data directory and fake.
import { jest } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import type { EdgeAgentResult } from '#contracts';
import type { RunningEdge } from '../../../apps/edge-connector/src/app.js';
import { caseDirs } from '../../support/edge.js';
import {
  FAKE_GEMINI_MODEL,
  fakeGeminiEnv,
  geminiEntryPoint,
  pinFakeGeminiModel,
  startFakeGemini,
  type FakeGemini,
} from '../../support/fake-gemini/index.js';
import {
  childrenIn,
  EdgeBus,
  tearDownCase,
  lastAssistant,
  REMEMBER_SWORDFISH,
  repoRoot,
  WAIT_MS,
} from './acp-edge-harness.js';

jest.setTimeout(120_000);

const bus = new EdgeBus('4422', 'geminiedge');

interface Case {
  base: string;
  project: string;
  dataDir: string;
  homes: string;
  fake: FakeGemini;
  edge: RunningEdge;
  spares: boolean;
}
let current: Case;

beforeAll(() => bus.open());
afterAll(() => bus.close());

function bootEdge(c: Omit<Case, 'edge'>): Promise<RunningEdge> {
  return bus.boot({
    TETHER_EDGE_DATA_DIR: c.dataDir,
    TETHER_ACP_HOME: c.homes,
    TETHER_GEMINI_PATH: geminiEntryPoint(repoRoot),
    TETHER_ACP_SPARES: String(c.spares),
    HOME: path.join(c.base, 'home'),
    ...fakeGeminiEnv(c.fake),
  });
}

async function setUp(spares = true): Promise<void> {
  const fake = await startFakeGemini();
  const dirs = await caseDirs('gemini-edge');
  const c = { ...dirs, homes: path.join(dirs.base, 'homes'), fake, spares };
  await pinFakeGeminiModel(path.join(c.homes, 'gemini'));
  current = { ...c, edge: await bootEdge(c) };
}

afterEach(() => tearDownCase({ ...current, provider: current.fake }));

async function start(project = current.project): Promise<EdgeAgentResult> {
  const started = await bus.startSession('gemini', project);
  expect(started).toMatchObject({ status: 'ok', revision: 1, project });
  return started;
}

async function untilIdle(id: string): Promise<EdgeAgentResult> {
  const idle = await bus.watchUntil(id, (s) => !s.running, 'the turn to finish');
  expect(idle.turn_timing).toEqual(
    expect.objectContaining({ dispatch_ms: expect.any(Number), finished_ms: expect.any(Number) }),
  );
  return idle;
}

const send = (id: string, text: string) => bus.sendOk(id, text);

const approvalShown = (s: EdgeAgentResult) => (s.approvals ?? []).length > 0;

async function approveNext(id: string, decision: 'accept' | 'decline'): Promise<EdgeAgentResult> {
  const asking = await bus.watchUntil(id, approvalShown, 'an approval');
  const approval = asking.approvals![0]!;
  expect(approval).toMatchObject({ kind: 'command', directory: current.project });
  const answered = await bus.rpc({ action: 'approve', ...bus.on(id), approval_id: approval.id, decision });
  expect(answered.status).toBe('ok');
  return asking;
}

describe('edge connector driving the real Gemini CLI over ACP', () => {
  it('streams a reply with ordered timing and offers the model Gemini reports', async () => {
    await setUp();
    const reply = 'Hello from the scripted Gemini, streamed in several pieces to the edge.';
    // Chunks far apart, so the router sees the reply grow even on a loaded machine.
    current.fake.script({ kind: 'think', text: reply, delayMs: 250 });
    const { session_id: id } = await start();
    await send(id!, 'hello');
    const done = await untilIdle(id!);
    expect(done.status).toBe('ok');
    expect(done.messages).toEqual([
      { role: 'user', text: 'hello' },
      { role: 'assistant', text: reply },
    ]);
    const timing = done.turn_timing!;
    expect(timing.first_reply_ms).toEqual(expect.any(Number));
    expect(timing.dispatch_ms!).toBeLessThanOrEqual(timing.first_reply_ms!);
    expect(timing.first_reply_ms!).toBeLessThanOrEqual(timing.finished_ms!);
    expect(done.activities?.find((a) => a.kind === 'reasoning')?.status).toBe('completed');
    const partial = bus.updates.filter((u) => {
      const text = u.session_id === id ? lastAssistant(u.snapshot) : '';
      return text.length > 0 && text.length < reply.length;
    });
    expect(partial.length).toBeGreaterThan(0);
    expect(current.fake.requests.at(-1)?.model).toBe(FAKE_GEMINI_MODEL);

    // The models Gemini CLI reported in session/new; a switch applies to the next prompt.
    const models = await bus.rpc({ action: 'models', ...bus.on(id!) });
    expect(models).toMatchObject({ status: 'ok', models_available: true });
    const other = models.models?.find(
      (model) => model.id !== FAKE_GEMINI_MODEL && !model.id.startsWith('auto'),
    );
    expect(other).toBeDefined();
    expect((await bus.rpc({ action: 'model', ...bus.on(id!), model: 'gemini-invented' })).status).toBe(
      'invalid_request',
    );
    expect(await bus.rpc({ action: 'model', ...bus.on(id!), model: other!.id })).toMatchObject({
      status: 'ok',
      model: other!.id,
    });
    await send(id!, 'with the other model');
    await untilIdle(id!);
    expect(current.fake.requests.at(-1)?.model).toBe(other!.id);
    expect(current.fake.unknownRequests).toBe(0);
  });

  it('runs a command once approved, and not when declined (the turn still ends)', async () => {
    await setUp();
    const { session_id: id } = await start();
    await send(id!, 'run: echo approved > approved.txt');
    const asking = await approveNext(id!, 'accept');
    expect(asking.approvals![0]!.command).toContain('echo approved');
    const first = await untilIdle(id!);
    expect(await readFile(path.join(current.project, 'approved.txt'), 'utf8')).toBe('approved\n');
    expect(first.activities?.find((a) => a.kind === 'commandExecution')?.status).toBe('completed');

    await send(id!, 'run: echo declined > declined.txt');
    await approveNext(id!, 'decline');
    const second = await untilIdle(id!);
    expect(second.status).toBe('ok');
    expect(existsSync(path.join(current.project, 'declined.txt'))).toBe(false);
    expect(second.activities?.filter((a) => a.kind === 'commandExecution').at(-1)?.status).toBe('declined');
  });

  it('shows a file write with its diff for approval, then writes it', async () => {
    await setUp();
    const { session_id: id } = await start();
    await send(id!, 'patch: notes.txt hello from gemini');
    const asking = await bus.watchUntil(id!, approvalShown, 'a file-change approval');
    const approval = asking.approvals![0]!;
    expect(approval).toMatchObject({ kind: 'file_change', directory: current.project });
    expect(approval.changes).toEqual([
      expect.objectContaining({
        path: path.join(current.project, 'notes.txt'),
        kind: 'add',
        diff: expect.stringContaining('+hello from gemini'),
      }),
    ]);
    await bus.rpc({ action: 'approve', ...bus.on(id!), approval_id: approval.id, decision: 'accept' });
    const done = await untilIdle(id!);
    expect(await readFile(path.join(current.project, 'notes.txt'), 'utf8')).toBe('hello from gemini\n');
    expect(done.activities?.find((a) => a.kind === 'fileChange')?.status).toBe('completed');
  });

  it('interrupts while text streams, while an approval is pending and while a command runs', async () => {
    await setUp();
    const { session_id: id } = await start();

    await send(id!, 'slow: a long story');
    await bus.watchUntil(id!, (s) => lastAssistant(s).length > 0, 'the first chunk');
    expect((await bus.rpc({ action: 'interrupt', ...bus.on(id!) })).status).toBe('ok');
    const streamed = await untilIdle(id!);
    expect(streamed.closed).toBeFalsy();
    expect(lastAssistant(streamed)).not.toContain('done.');

    await send(id!, 'run: echo never > never.txt');
    await bus.watchUntil(id!, approvalShown, 'an approval');
    expect((await bus.rpc({ action: 'interrupt', ...bus.on(id!) })).status).toBe('ok');
    const pending = await untilIdle(id!);
    expect(pending.approvals ?? []).toEqual([]);
    expect(existsSync(path.join(current.project, 'never.txt'))).toBe(false);

    await send(id!, 'run: sleep 5 && echo late > late.txt');
    await approveNext(id!, 'accept');
    await bus.watchUntil(
      id!,
      (s) => s.activities?.some((a) => a.kind === 'commandExecution' && a.status === 'running') ?? false,
      'the command to run',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await bus.rpc({ action: 'interrupt', ...bus.on(id!) })).status).toBe('ok');
    await untilIdle(id!);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(existsSync(path.join(current.project, 'late.txt'))).toBe(false);

    await send(id!, 'still there?');
    const after = await untilIdle(id!);
    expect(lastAssistant(after)).toBe('Hello from the fake Gemini.');
  });

  it('resumes after an edge restart with the conversation intact, and answers busy in the creation minute', async () => {
    await setUp();
    current.fake.script(...REMEMBER_SWORDFISH);
    const started = await start();
    const id = started.session_id!;
    await send(id, 'remember the word swordfish');
    await untilIdle(id);
    await current.edge.close();
    current.edge = await bootEdge(current);

    const { last, seed } = bus.resumeSeed(id);
    const resume = () =>
      bus.rpc({ action: 'resume', ...bus.on(id) }, { resume: seed, project_root: current.project });

    // Gemini CLI loses the history when it loads in the creation minute: the edge refuses first.
    // The session's file is stamped with the current minute (as if created just now); away from a
    // minute boundary, so the stamp is still current when the edge looks.
    const seconds = new Date().getUTCSeconds();
    if (seconds > 50) await new Promise((resolve) => setTimeout(resolve, (61 - seconds) * 1000));
    await restampChats(new Date());
    expect((await resume()).status).toBe('busy');

    // A session created two minutes ago, as Gemini names its file: the load works, history intact.
    await restampChats(new Date(Date.now() - 120_000));
    const resumed = await resume();
    expect(resumed).toMatchObject({ status: 'ok', session_id: id, thread_id: started.thread_id });
    expect(resumed.messages).toEqual(last.messages);
    await send(id, 'what was the word?');
    const done = await untilIdle(id);
    expect(lastAssistant(done)).toBe('You said swordfish.');
    const [first, second] = current.fake.requests.filter((r) => r.step === 'text');
    // The model received the earlier conversation with the new prompt.
    expect(second!.contents).toBeGreaterThan(first!.contents);
    expect(second!.userTexts).toBeGreaterThan(first!.userTexts);
  });

  it('closes a session whose agent dies mid-turn and leaves the others running', async () => {
    await setUp(false);
    const other = path.join(current.base, 'other');
    await mkdir(other);
    const doomed = (await start()).session_id!;
    const survivor = (await start(other)).session_id!;
    await send(doomed, 'slow: long task');
    await bus.watchUntil(doomed, (s) => lastAssistant(s).length > 0, 'the first chunk');
    const [pid] = childrenIn(current.project);
    expect(pid).toEqual(expect.any(Number));
    process.kill(pid!, 'SIGKILL');
    const closed = await bus.watchUntil(doomed, (s) => Boolean(s.closed), 'the session to close');
    expect(closed.status).toBe('session_closed');
    expect(closed.running).toBeFalsy();

    await send(survivor, 'are you there?');
    const done = await untilIdle(survivor);
    expect(done.closed).toBeFalsy();
    expect(lastAssistant(done)).toBe('Hello from the fake Gemini.');
  });
});

const minuteUtc = (date: Date): string => date.toISOString().slice(0, 16).replace(':', '-');

/** Renames every session file of the Gemini home as if it had been created at `when`. */
async function restampChats(when: Date): Promise<void> {
  for (const file of await chatFiles()) {
    const moved = file.replace(/session-\d{4}-\d\d-\d\dT\d\d-\d\d-/, `session-${minuteUtc(when)}-`);
    if (moved !== file) await rename(file, moved);
  }
}

async function chatFiles(): Promise<string[]> {
  const tmp = path.join(current.homes, 'gemini', '.gemini', 'tmp');
  const out: string[] = [];
  for (const project of await readdir(tmp).catch(() => [] as string[])) {
    const chats = path.join(tmp, project, 'chats');
    for (const file of await readdir(chats).catch(() => [] as string[])) out.push(path.join(chats, file));
  }
  return out;
}

void WAIT_MS;
