import { Logger } from '@nestjs/common';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EdgeAgentRequest, EdgeAgentResult, EdgeAgentRPCRequest, ResumeState } from '#contracts';
import { DEFAULT_SCRIPT, SCRIPTED_INSTALLATION, ScriptedDriver } from '../agent/scripted/index.js';
import { BINDINGS_FILE } from './bindings.js';
import { SessionsService } from './sessions.service.js';

const ACCESS = 'a'.repeat(32);
const OTHER_ACCESS = 'b'.repeat(32);
const OWNER = '1';

let base: string;
let project: string;
let dataDir: string;
beforeAll(() => {
  Logger.overrideLogger(false);
  base = realpathSync(mkdtempSync(join(tmpdir(), 'edge-resume-')));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));
beforeEach(() => {
  const dir = mkdtempSync(join(base, 'case-'));
  project = join(dir, 'project');
  dataDir = join(dir, 'data');
  mkdirSync(project);
});

/** One edge process: a session manager over the scripted driver, with the given data directory. */
function edge(dir = dataDir) {
  const sessions = new SessionsService(
    new ScriptedDriver(DEFAULT_SCRIPT),
    { homeDir: base, unsupportedUser: false, dataDir: dir },
    { changed: () => undefined },
  );
  const call = (
    request: Partial<EdgeAgentRequest> & { action: EdgeAgentRequest['action'] },
    extra: Partial<EdgeAgentRPCRequest> = {},
    actor = OWNER,
  ): Promise<EdgeAgentResult> =>
    sessions.handle(
      {
        version: 1,
        actor_id: actor,
        project_root: project,
        ...extra,
        request: { edge_id: '1', ...request },
      },
      new AbortController().signal,
    );
  return { sessions, call };
}

type Edge = ReturnType<typeof edge>;

/** Asks for a saved session of the scripted installation in `project`. */
const requestStart = (e: Edge) =>
  e.call({ action: 'start', installation_id: SCRIPTED_INSTALLATION.id, project, access_id: ACCESS });

async function startSession(e: Edge): Promise<string> {
  const started = await requestStart(e);
  expect(started.status).toBe('ok');
  return started.session_id as string;
}

async function idle(e: Edge, id: string): Promise<EdgeAgentResult> {
  for (let i = 0; i < 400; i += 1) {
    const snapshot = await e.call({ action: 'poll', session_id: id, access_id: ACCESS });
    if (!snapshot.running) return snapshot;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('the turn did not finish');
}

/** The seed the router builds from the last stored snapshot. */
function seedOf(snapshot: EdgeAgentResult): ResumeState {
  return {
    session_id: snapshot.session_id as string,
    messages: snapshot.messages?.map((message) => ({ role: message.role, text: message.text })),
    activities: snapshot.activities,
    title: snapshot.title,
    model: snapshot.model,
    started_at: snapshot.started_at,
    revision: snapshot.revision as number,
    window: snapshot.window,
    truncated: snapshot.truncated,
  };
}

const resumeOf = (id: string, seed: ResumeState, access = ACCESS) =>
  [{ action: 'resume' as const, session_id: id, access_id: access }, { resume: seed }] as const;

/** A session with one finished turn, stopped, and its last snapshot. */
async function conversation(e: Edge): Promise<{ id: string; last: EdgeAgentResult }> {
  const id = await startSession(e);
  expect((await e.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'hello' })).status).toBe(
    'ok',
  );
  await idle(e, id);
  expect(
    (
      await e.call({
        action: 'permissions',
        session_id: id,
        access_id: ACCESS,
        permission_mode: 'workspace-write',
      })
    ).permission_mode,
  ).toBe('workspace-write');
  const last = await e.call({ action: 'stop', session_id: id, access_id: ACCESS });
  expect(last).toMatchObject({ status: 'session_closed', closed: true });
  return { id, last };
}

describe('resume bindings and resume', () => {
  it('does not record a dispatch refused because the session is not here: after resume it runs', async () => {
    const first = edge();
    const { id, last } = await conversation(first);
    await first.sessions.shutdown();

    // The new process lost the runtime: a send (an `unknown` one resent with retry_unknown, say)
    // is not_found. That says nothing about the dispatch, which the old process may have run.
    const restarted = edge();
    const dispatchId = `${Date.now()}-${'e'.repeat(32)}`;
    const send = { action: 'send' as const, session_id: id, access_id: ACCESS, text: 'after the restart' };
    expect((await restarted.call(send, { dispatch_id: dispatchId })).status).toBe('not_found');
    const status = () =>
      restarted.call({ action: 'dispatch_status', session_id: id }, { dispatch_id: dispatchId });
    expect((await status()).dispatch).toEqual({ state: 'absent' });

    // Once resumed, the same dispatch id runs instead of answering not_found for ever.
    expect((await restarted.call(...resumeOf(id, seedOf(last)))).status).toBe('ok');
    expect((await restarted.call(send, { dispatch_id: dispatchId })).status).toBe('ok');
    expect((await status()).dispatch).toMatchObject({ state: 'accepted' });
    await idle(restarted, id);
    await restarted.sessions.shutdown();
  });
});

describe('resume bindings and resume', () => {
  it('persists a 0600 binding at start and resumes after a restart with the seed state', async () => {
    const first = edge();
    const { id, last } = await conversation(first);
    const file = join(dataDir, BINDINGS_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored).toEqual({
      version: 1,
      bindings: [
        expect.objectContaining({
          owner: OWNER,
          access: ACCESS,
          session: id,
          thread: last.thread_id,
          project,
          access_project: project,
          installation_id: SCRIPTED_INSTALLATION.id,
        }),
      ],
    });
    await first.sessions.shutdown();

    const restarted = edge();
    const seed = { ...seedOf(last), started_at: new Date(Date.now() - 48 * 3_600_000).toISOString() };
    const resumed = await restarted.call(...resumeOf(id, seed));
    expect(resumed).toMatchObject({
      status: 'ok',
      session_id: id,
      thread_id: last.thread_id,
      revision: (last.revision as number) + 1,
      window: last.window,
      title: last.title,
      started_at: seed.started_at,
      running: false,
      closed: false,
      permission_mode: 'read-only',
    });
    expect(resumed.messages).toEqual(last.messages);
    expect(resumed.turn_timing).toBeUndefined();
    // Idempotent while open: the same session, not a second runtime.
    const again = await restarted.call(...resumeOf(id, seed));
    expect(again).toMatchObject({ status: 'ok', revision: resumed.revision });
    expect(restarted.sessions.liveSessions).toBe(1);
    // The resumed session takes new turns after the restored ones.
    await restarted.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'and again' });
    const done = await idle(restarted, id);
    expect(done.messages?.length).toBe((last.messages?.length ?? 0) + 2);
    await restarted.sessions.shutdown();
  });
});

describe('resume bindings and resume', () => {
  it('refuses seeds that do not belong to the request or break the display bounds', async () => {
    const e = edge();
    const { id, last } = await conversation(e);
    const seed = seedOf(last);
    const cases: [string, ResumeState][] = [
      ['another session', { ...seed, session_id: 'c'.repeat(32) }],
      ['revision 0', { ...seed, revision: 0 }],
      ['a system message', { ...seed, messages: [{ role: 'system', text: 'x' }] }],
      [
        'too many messages',
        { ...seed, messages: Array.from({ length: 97 }, () => ({ role: 'user', text: 'x' })) },
      ],
      ['too much text', { ...seed, messages: [{ role: 'user', text: 'x'.repeat(256 * 1024 + 1) }] }],
      [
        'too many activities',
        { ...seed, activities: Array.from({ length: 129 }, (_, i) => ({ id: `${i}`, kind: 'reasoning' })) },
      ],
      ['a bad started_at', { ...seed, started_at: 'yesterday' }],
    ];
    for (const [label, bad] of cases) {
      expect([label, (await e.call(...resumeOf(id, bad))).status]).toEqual([label, 'invalid_request']);
    }
    expect(e.sessions.liveSessions).toBe(0);
  });

  it('answers resume_unavailable to another actor, access or project, and busy to a concurrent resume', async () => {
    const first = edge();
    const { id, last } = await conversation(first);
    await first.sessions.shutdown();
    const e = edge();
    const seed = seedOf(last);
    expect((await e.call(...resumeOf(id, seed), '2')).status).toBe('resume_unavailable');
    expect((await e.call(...resumeOf(id, seed, OTHER_ACCESS))).status).toBe('resume_unavailable');
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    const [request, envelope] = resumeOf(id, seed);
    expect((await e.call(request, { ...envelope, project_root: elsewhere })).status).toBe(
      'resume_unavailable',
    );

    const [one, two] = await Promise.all([e.call(...resumeOf(id, seed)), e.call(...resumeOf(id, seed))]);
    expect([one.status, two.status].sort()).toEqual(['busy', 'ok']);
    // A live session of another actor is not theirs to resume either.
    expect((await e.call(...resumeOf(id, seed), '2')).status).toBe('resume_unavailable');
    await e.sessions.shutdown();
  });

  it('keeps the binding on stop and removes it on delete, also after a restart', async () => {
    const e = edge();
    const { id, last } = await conversation(e);
    // Stopped: resumable in the same process.
    expect((await e.call(...resumeOf(id, seedOf(last)))).status).toBe('ok');
    await e.call({ action: 'stop', session_id: id, access_id: ACCESS });
    expect((await e.call({ action: 'delete', session_id: id, access_id: ACCESS })).status).toBe('ok');
    expect((await e.call(...resumeOf(id, seedOf(last)))).status).toBe('resume_unavailable');
    expect(JSON.parse(readFileSync(join(dataDir, BINDINGS_FILE), 'utf8')).bindings).toEqual([]);

    // After a restart only the binding is left; delete still removes it once.
    const other = await conversation(e);
    await e.sessions.shutdown();
    const restarted = edge();
    const del = { action: 'delete' as const, session_id: other.id, access_id: ACCESS };
    expect((await restarted.call(del)).status).toBe('ok');
    expect((await restarted.call(del)).status).toBe('not_found');
    expect((await restarted.call(...resumeOf(other.id, seedOf(other.last)))).status).toBe(
      'resume_unavailable',
    );
  });
});

describe('resume bindings and resume', () => {
  it('never overwrites a binding file it cannot decode', async () => {
    mkdirSync(dataDir, { recursive: true });
    const file = join(dataDir, BINDINGS_FILE);
    const corrupt = JSON.stringify({ version: 1, bindings: [], extra: true });
    writeFileSync(file, corrupt);
    const e = edge();
    const started = await requestStart(e);
    expect(started.status).toBe('unavailable');
    expect(readFileSync(file, 'utf8')).toBe(corrupt);
    expect(e.sessions.liveSessions).toBe(0);
    // A transient session needs no binding.
    const transient = await e.call({ action: 'start', installation_id: SCRIPTED_INSTALLATION.id, project });
    expect(transient.status).toBe('ok');
    await e.sessions.shutdown();
  });
});
