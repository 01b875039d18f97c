import { Logger } from '@nestjs/common';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Limits,
  toWire,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
} from '#contracts';
import type { AgentDriver, AgentEvent, OpenSessionOptions } from '../agent/agent-driver.js';
import {
  DEFAULT_SCRIPT,
  SCRIPTED_INSTALLATION,
  ScriptedDriver,
  parseScript,
} from '../agent/scripted/index.js';
import type { SessionClock } from './turn-state.js';
import { SessionsService, type SessionChange, type SessionChangeSink } from './sessions.service.js';

const ACCESS = 'a'.repeat(32);
const OTHER_ACCESS = 'b'.repeat(32);
const OWNER = '1';

/** Keeps the last event callback so a test can inject native events (foreign turns, floods). */
class TapDriver implements AgentDriver {
  readonly kind: string;
  emit: (event: AgentEvent) => void = () => undefined;
  constructor(private readonly inner: AgentDriver) {
    this.kind = inner.kind;
  }
  discover() {
    return this.inner.discover();
  }
  open(options: OpenSessionOptions) {
    this.emit = options.onEvent;
    return this.inner.open(options);
  }
}

class RecordingSink implements SessionChangeSink {
  readonly changes: SessionChange[] = [];
  changed(_sessionId: string, build: () => SessionChange): void {
    this.changes.push(build());
  }
}

let home: string;
beforeAll(() => {
  Logger.overrideLogger(false);
  home = realpathSync(mkdtempSync(join(tmpdir(), 'edge-sessions-')));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

interface Harness {
  sessions: SessionsService;
  driver: TapDriver;
  sink: RecordingSink;
  call(
    request: Partial<EdgeAgentRequest> & { action: EdgeAgentRequest['action'] },
    extra?: Partial<EdgeAgentRPCRequest>,
  ): Promise<EdgeAgentResult>;
  start(access?: string): Promise<string>;
  waitFor(
    sessionId: string,
    predicate: (snapshot: EdgeAgentResult) => boolean,
    access?: string,
  ): Promise<EdgeAgentResult>;
}

function harness(rawScript?: unknown, clock?: SessionClock): Harness {
  const script = rawScript ? parseScript(rawScript, 'test') : DEFAULT_SCRIPT;
  const driver = new TapDriver(new ScriptedDriver(script));
  const sink = new RecordingSink();
  const sessions = new SessionsService(driver, { homeDir: home, unsupportedUser: false, clock }, sink);
  const call: Harness['call'] = (request, extra = {}) =>
    sessions.handle(
      { version: 1, actor_id: OWNER, ...extra, request: { edge_id: '1', ...request } },
      new AbortController().signal,
    );
  const start = async (access?: string): Promise<string> => {
    const started = await call({
      action: 'start',
      installation_id: SCRIPTED_INSTALLATION.id,
      project: home,
      access_id: access,
    });
    expect(started.status).toBe('ok');
    return started.session_id as string;
  };
  const waitFor: Harness['waitFor'] = async (sessionId, predicate, access = ACCESS) => {
    for (let i = 0; i < 400; i += 1) {
      const snapshot = await call({ action: 'poll', session_id: sessionId, access_id: access || undefined });
      if (predicate(snapshot)) return snapshot;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error('condition not reached');
  };
  return { sessions, driver, sink, call, start, waitFor };
}

const idle = (snapshot: EdgeAgentResult): boolean => !snapshot.running;
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(toWire(value)));

describe('SessionsService with the scripted driver', () => {
  it('starts a session at revision 1 and streams a reply that quotes only the prompt length', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(h.sink.changes[0]?.revision).toBe(1);
    const sent = await h.call({
      action: 'send',
      session_id: id,
      access_id: ACCESS,
      text: 'secret prompt text',
    });
    expect(sent.status).toBe('ok');
    const done = await h.waitFor(id, idle);
    expect(done.messages?.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(done.messages?.[1]?.text).toBe('Scripted reply to a prompt of 18 characters.');
    expect(done.title).toBe('secret prompt text');
    const revisions = h.sink.changes.map((change) => change.revision);
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
    expect(new Set(revisions).size).toBe(revisions.length);
  });

  it('answers not_found to another owner or access for poll, send, interrupt and stop', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    for (const action of ['poll', 'send', 'interrupt', 'stop'] as const) {
      const text = action === 'send' ? 'hi' : undefined;
      expect(
        (await h.call({ action, session_id: id, access_id: ACCESS, text }, { actor_id: '2' })).status,
      ).toBe('not_found');
      expect((await h.call({ action, session_id: id, access_id: OTHER_ACCESS, text })).status).toBe(
        'not_found',
      );
      expect((await h.call({ action, session_id: id, text })).status).toBe('not_found');
    }
    expect((await h.call({ action: 'poll', session_id: id, access_id: ACCESS })).closed).toBeFalsy();
  });

  it('answers a second send of one dispatch id with the first outcome, never a second turn', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    const dispatchId = `${Date.now()}-${'c'.repeat(32)}`;
    const send = { action: 'send' as const, session_id: id, access_id: ACCESS, text: 'once' };
    const status = () => h.call({ action: 'dispatch_status', session_id: id }, { dispatch_id: dispatchId });
    expect((await status()).dispatch).toEqual({ state: 'absent' });
    const [first, second] = await Promise.all([
      h.call(send, { dispatch_id: dispatchId }),
      h.call(send, { dispatch_id: dispatchId }),
    ]);
    expect(first.status).toBe('ok');
    expect(second.status).toBe('ok');
    const done = await h.waitFor(id, idle);
    expect(done.messages?.filter((m) => m.role === 'user').map((m) => m.text)).toEqual(['once']);
    // Once the turn is over, a third copy still starts nothing.
    expect((await h.call(send, { dispatch_id: dispatchId })).status).toBe('ok');
    expect((await h.call({ action: 'poll', session_id: id, access_id: ACCESS })).messages).toHaveLength(2);
    expect((await status()).dispatch).toEqual({ state: 'accepted', item_id: 'm:0:0' });
    // Another owner learns nothing about it.
    expect(
      (
        await h.call(
          { action: 'dispatch_status', session_id: id },
          { dispatch_id: dispatchId, actor_id: '2' },
        )
      ).dispatch,
    ).toEqual({ state: 'absent' });
  });

  it('still answers an accepted dispatch id after its transient session is gone', async () => {
    const h = harness();
    const id = await h.start();
    const dispatchId = `${Date.now()}-${'e'.repeat(32)}`;
    const send = { action: 'send' as const, session_id: id, text: 'before stop' };
    expect((await h.call(send, { dispatch_id: dispatchId })).status).toBe('ok');
    await h.waitFor(id, idle, '');
    expect((await h.call({ action: 'stop', session_id: id })).status).toBe('session_closed');
    expect((await h.call({ action: 'poll', session_id: id })).status).toBe('not_found');
    const again = await h.call(send, { dispatch_id: dispatchId });
    expect(again).toMatchObject({ status: 'ok', dispatch: { state: 'accepted', item_id: 'm:0:0' } });
    // Without the dispatch id it is an ordinary send to a session that no longer exists.
    expect((await h.call(send)).status).toBe('not_found');
  });

  it('never runs an interrupt twice for one dispatch id: a later turn keeps running', async () => {
    const h = harness({ rules: [{ steps: [{ type: 'delay', ms: 5_000 }] }] });
    const id = await h.start(ACCESS);
    const base = { session_id: id, access_id: ACCESS };
    const interruptId = `${Date.now()}-${'f'.repeat(32)}`;
    expect((await h.call({ action: 'send', ...base, text: 'first' })).running).toBe(true);
    expect((await h.call({ action: 'interrupt', ...base }, { dispatch_id: interruptId })).status).toBe('ok');
    await h.waitFor(id, idle);
    expect((await h.call({ action: 'send', ...base, text: 'second' })).running).toBe(true);
    // The same interrupt again (a retry the router's lost ledger could not recognise).
    const again = await h.call({ action: 'interrupt', ...base }, { dispatch_id: interruptId });
    expect(again).toMatchObject({ status: 'ok', dispatch: { state: 'accepted' } });
    expect((await h.call({ action: 'poll', ...base })).running).toBe(true);
    await h.call({ action: 'stop', ...base });
  });

  it('records a first-hand refusal of a dispatch id and answers it again without running', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    const dispatchId = `${Date.now()}-${'d'.repeat(32)}`;
    const blank = { action: 'send' as const, session_id: id, access_id: ACCESS, text: '   ' };
    expect((await h.call(blank, { dispatch_id: dispatchId })).status).toBe('invalid_request');
    expect(
      (await h.call({ action: 'dispatch_status', session_id: id }, { dispatch_id: dispatchId })).dispatch,
    ).toEqual({ state: 'rejected', status: 'invalid_request' });
    expect((await h.call(blank, { dispatch_id: dispatchId })).status).toBe('invalid_request');
    // A send without a dispatch id is unaffected.
    expect((await h.call({ ...blank, text: 'fine' })).status).toBe('ok');
  });

  it('refuses a second send while a turn runs, and ignores events of a foreign turn', async () => {
    const h = harness({
      rules: [
        {
          steps: [
            { type: 'delay', ms: 300 },
            { type: 'reply', text: 'late', deltas: 1 },
          ],
        },
      ],
    });
    const id = await h.start(ACCESS);
    expect((await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'one' })).running).toBe(
      true,
    );
    expect((await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'two' })).status).toBe(
      'busy',
    );
    h.driver.emit({ type: 'message_delta', turnId: 'turn-foreign', itemId: 'x', text: 'INJECTED' });
    h.driver.emit({ type: 'turn_completed', turnId: 'turn-foreign', status: 'failed' });
    const during = await h.call({ action: 'poll', session_id: id, access_id: ACCESS });
    expect(JSON.stringify(during)).not.toContain('INJECTED');
    expect(during.running).toBe(true);
    const done = await h.waitFor(id, idle);
    expect(done.messages?.map((m) => m.text)).toEqual(['one', 'late']);
    expect(done.status).toBe('ok');
  });

  it('truncates a 256 KiB delta to at most 64 KiB per message while the turn keeps running', async () => {
    const big = '€'.repeat(90_000); // 270 000 bytes
    const h = harness({
      rules: [
        {
          steps: [
            { type: 'reply', text: big, deltas: 1 },
            { type: 'delay', ms: 5_000 },
          ],
        },
      ],
    });
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
    const snapshot = await h.waitFor(id, (s) => (s.messages?.[1]?.text ?? '').length > 0);
    const text = snapshot.messages?.[1]?.text ?? '';
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(Limits.MESSAGE_MAX_BYTES);
    expect(text).toBe('€'.repeat(text.length));
    expect(snapshot.truncated).toBe(true);
    expect(snapshot.running).toBe(true);
    await h.call({ action: 'stop', session_id: id, access_id: ACCESS });
  });

  it('wakes a watch on a delta and starts a new message for a new item id', async () => {
    const h = harness({
      rules: [
        {
          steps: [
            { type: 'delay', ms: 100 },
            { type: 'reply', text: 'first', deltas: 1 },
            { type: 'reply', text: 'second', deltas: 2 },
          ],
        },
      ],
    });
    const id = await h.start(ACCESS);
    const sent = await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
    const woken = await h.call({
      action: 'watch',
      session_id: id,
      access_id: ACCESS,
      cursor: String(sent.revision),
    });
    expect(woken.revision).toBeGreaterThan(sent.revision ?? 0);
    const done = await h.waitFor(id, idle);
    expect(done.messages?.map((m) => m.text)).toEqual(['go', 'first', 'second']);
    const stale = await h.call({ action: 'watch', session_id: id, access_id: ACCESS, cursor: '1' });
    expect(stale.revision).toBe(done.revision);
  });

  it('answers unavailable to a watch whose call was cancelled', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    const controller = new AbortController();
    const watch = h.sessions.handle(
      {
        version: 1,
        actor_id: OWNER,
        request: { edge_id: '1', action: 'watch', session_id: id, access_id: ACCESS, cursor: '1' },
      },
      controller.signal,
    );
    controller.abort();
    expect((await watch).status).toBe('unavailable');
  });

  it('never shows command or output text to a transient session', async () => {
    const h = harness({
      rules: [
        {
          steps: [
            { type: 'command', command: 'cat SECRET-COMMAND', output: 'SECRET-OUTPUT', output_deltas: 2 },
          ],
        },
      ],
    });
    const id = await h.start();
    await h.call({ action: 'send', session_id: id, text: 'go' });
    const done = await h.waitFor(id, idle, '');
    expect(done.activities).toHaveLength(1);
    expect(done.activities?.[0]?.status).toBe('completed');
    expect(JSON.stringify(done)).not.toMatch(/SECRET/);
    expect(done.permissions_available).toBeFalsy();
    expect(done.history_windowing).toBeFalsy();
  });

  it('shows streamed output to a saved session, replaced by the aggregated output', async () => {
    const h = harness({
      rules: [{ steps: [{ type: 'command', command: 'ls', output: 'a\nb\n', exit_code: 2 }] }],
    });
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
    const done = await h.waitFor(id, idle);
    expect(done.activities?.[0]).toMatchObject({
      kind: 'commandExecution',
      status: 'failed',
      command: 'ls',
      output: 'a\nb\n',
      exit_code: 2,
    });
  });

  it('keeps at most 128 activities and drops unknown kinds', async () => {
    const h = harness({ rules: [{ steps: [{ type: 'delay', ms: 5_000 }] }] });
    const id = await h.start(ACCESS);
    const sent = await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
    expect(sent.running).toBe(true);
    for (let i = 0; i < 200; i += 1) {
      h.driver.emit({
        type: 'activity',
        turnId: 'turn-1',
        activity: {
          nativeId: `n${i}`,
          kind: 'commandExecution',
          status: 'completed',
          output: 'x'.repeat(2048),
        },
      });
    }
    h.driver.emit({
      type: 'activity',
      turnId: 'turn-1',
      activity: { nativeId: 'chatter', kind: 'agentMessage', status: 'running' },
    });
    const snapshot = await h.call({ action: 'poll', session_id: id, access_id: ACCESS });
    expect(snapshot.activities).toHaveLength(Limits.ACTIVITIES_MAX);
    expect(snapshot.truncated).toBe(true);
    const details = (snapshot.activities ?? []).reduce(
      (sum, a) => sum + Buffer.byteLength(a.output ?? ''),
      0,
    );
    expect(details).toBeLessThanOrEqual(Limits.ACTIVITY_WINDOW_MAX_BYTES);
    expect(snapshot.activities?.some((a) => a.kind === 'agentMessage')).toBe(false);
    await h.call({ action: 'stop', session_id: id, access_id: ACCESS });
  });

  it('consumes an approval once, refuses a replay, and declines a request of a stale turn', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'approve me' });
    const asking = await h.waitFor(id, (s) => (s.approvals ?? []).length === 1);
    const approval = asking.approvals?.[0];
    expect(approval).toMatchObject({ kind: 'command', command: 'echo scripted', reason: 'Scripted check' });
    expect(approval?.id).toMatch(/^[0-9a-f]{32}$/);
    h.driver.emit({
      type: 'approval_request',
      turnId: 'turn-stale',
      nativeId: 99,
      kind: 'command',
      command: 'rm -rf /',
    });
    const afterStale = await h.call({ action: 'poll', session_id: id, access_id: ACCESS });
    expect(afterStale.approvals).toHaveLength(1);
    expect(afterStale.status).toBe('approval_declined');
    expect(
      (
        await h.call(
          {
            action: 'approve',
            session_id: id,
            access_id: ACCESS,
            approval_id: approval?.id,
            decision: 'accept',
          },
          { actor_id: '2' },
        )
      ).status,
    ).toBe('not_found');
    const accepted = await h.call({
      action: 'approve',
      session_id: id,
      access_id: ACCESS,
      approval_id: approval?.id,
      decision: 'accept',
    });
    expect(accepted.status).not.toBe('invalid_request');
    expect(accepted.approvals ?? []).toHaveLength(0);
    const replay = await h.call({
      action: 'approve',
      session_id: id,
      access_id: ACCESS,
      approval_id: approval?.id,
      decision: 'accept',
    });
    expect(replay.status).toBe('invalid_request');
    const done = await h.waitFor(id, idle);
    expect(done.activities?.[0]).toMatchObject({ status: 'completed', output: 'scripted\n' });
    expect(done.messages?.map((m) => m.text)).toEqual([
      'approve me',
      'I need to run a command first.',
      'Done.',
    ]);
  });

  it('auto-declines approvals for a transient session', async () => {
    const h = harness();
    const id = await h.start();
    await h.call({ action: 'send', session_id: id, text: 'approve me' });
    const done = await h.waitFor(id, idle, '');
    expect(done.status).toBe('approval_declined');
    expect(done.activities?.[0]?.status).toBe('declined');
    expect(
      (await h.call({ action: 'approve', session_id: id, approval_id: 'c'.repeat(32), decision: 'accept' }))
        .status,
    ).toBe('upgrade_required');
  });

  it('refuses an answer outside the options and sends nothing; echoes a valid one', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'ask me' });
    const asking = await h.waitFor(id, (s) => (s.input_requests ?? []).length === 1);
    const input = asking.input_requests?.[0];
    const wrong = await h.call({
      action: 'answer',
      session_id: id,
      access_id: ACCESS,
      input_id: input?.id,
      answers: [{ question_id: 'choice', answers: ['maybe'] }],
    });
    expect(wrong.status).toBe('invalid_request');
    const still = await h.call({ action: 'poll', session_id: id, access_id: ACCESS });
    expect(still.input_requests).toHaveLength(1);
    expect(still.running).toBe(true);
    const right = await h.call({
      action: 'answer',
      session_id: id,
      access_id: ACCESS,
      input_id: input?.id,
      answers: [{ question_id: 'choice', answers: ['yes'] }],
    });
    expect(right.status).toBe('ok');
    const replay = await h.call({
      action: 'answer',
      session_id: id,
      access_id: ACCESS,
      input_id: input?.id,
      answers: [{ question_id: 'choice', answers: ['yes'] }],
    });
    expect(replay.status).toBe('invalid_request');
    const done = await h.waitFor(id, idle);
    expect(done.messages?.[1]?.text).toBe('You answered yes.');
    expect(done.activities?.[0]).toMatchObject({
      kind: 'userInput',
      status: 'completed',
      output: 'Which option do you pick? → yes',
    });
  });

  it('shows a secret answer as [hidden] and never puts it in any snapshot', async () => {
    const h = harness({
      rules: [
        {
          steps: [
            { type: 'input', questions: [{ id: 'pw', question: 'Password?', is_secret: true }] },
            { type: 'reply', text: 'Got {answer}.' },
          ],
        },
      ],
    });
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
    const asking = await h.waitFor(id, (s) => (s.input_requests ?? []).length === 1);
    const answered = await h.call({
      action: 'answer',
      session_id: id,
      access_id: ACCESS,
      input_id: asking.input_requests?.[0]?.id,
      answers: [{ question_id: 'pw', answers: ['hunter2-very-secret'] }],
    });
    expect(answered.status).toBe('ok');
    const done = await h.waitFor(id, idle);
    expect(done.activities?.[0]?.output).toBe('Password? → [hidden]');
    expect(JSON.stringify(done)).not.toContain('hunter2');
    expect(h.sink.changes.some((change) => JSON.stringify(change).includes('hunter2'))).toBe(false);
  });

  it('accepts a model only from the catalog this session fetched', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    expect(
      (await h.call({ action: 'model', session_id: id, access_id: ACCESS, model: 'scripted-fast' })).status,
    ).toBe('invalid_request');
    const catalog = await h.call({ action: 'models', session_id: id, access_id: ACCESS });
    expect(catalog.models_available).toBe(true);
    expect(catalog.models?.map((m) => m.id)).toContain('scripted-fast');
    expect(
      (await h.call({ action: 'model', session_id: id, access_id: ACCESS, model: 'invented' })).status,
    ).toBe('invalid_request');
    const chosen = await h.call({
      action: 'model',
      session_id: id,
      access_id: ACCESS,
      model: 'scripted-fast',
    });
    expect(chosen.model).toBe('scripted-fast');
  });

  it('renames, ignores later native titles, and refuses delete while running', async () => {
    const h = harness({
      rules: [
        {
          steps: [
            { type: 'delay', ms: 100 },
            { type: 'title', title: 'Native name' },
            { type: 'delay', ms: 5_000 },
          ],
        },
      ],
    });
    const id = await h.start(ACCESS);
    expect(
      (await h.call({ action: 'rename', session_id: id, access_id: ACCESS, title: '  My chat  ' })).title,
    ).toBe('My chat');
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
    expect((await h.call({ action: 'delete', session_id: id, access_id: ACCESS })).status).toBe('busy');
    expect((await h.call({ action: 'models', session_id: id, access_id: ACCESS })).status).toBe('busy');
    expect(
      (
        await h.call({
          action: 'permissions',
          session_id: id,
          access_id: ACCESS,
          permission_mode: 'workspace-write',
        })
      ).status,
    ).toBe('busy');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await h.call({ action: 'poll', session_id: id, access_id: ACCESS })).title).toBe('My chat');
    const stopped = await h.call({ action: 'stop', session_id: id, access_id: ACCESS });
    expect(stopped).toMatchObject({ status: 'session_closed', closed: true, running: false });
    expect((await h.call({ action: 'delete', session_id: id, access_id: ACCESS })).status).toBe('ok');
    expect((await h.call({ action: 'poll', session_id: id, access_id: ACCESS })).status).toBe('not_found');
  });

  it('keeps snapshot JSON within 480 KiB with valid UTF-8', async () => {
    // Quotes double under JSON escaping, so the raw 256 KiB text window alone would overflow.
    const text = '"世'.repeat(12_000);
    const h = harness({ rules: [{ steps: [{ type: 'reply', text, deltas: 1 }] }] });
    const id = await h.start(ACCESS);
    for (let i = 0; i < 8; i += 1) {
      await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: `turn ${i}` });
      await h.waitFor(id, idle);
    }
    const snapshot = await h.call({ action: 'poll', session_id: id, access_id: ACCESS });
    expect(jsonBytes(snapshot)).toBeLessThanOrEqual(Limits.SNAPSHOT_MAX_BYTES);
    expect(snapshot.truncated).toBe(true);
    for (const message of snapshot.messages ?? []) {
      expect(Buffer.from(message.text ?? '', 'utf8').toString('utf8')).toBe(message.text);
      expect(message.text).not.toMatch(/\uFFFD/);
    }
  });

  it('rolls the window only on the exact archived revision, keeping the title', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'first round' });
    const done = await h.waitFor(id, idle);
    const mismatch = await h.call(
      { action: 'send', session_id: id, access_id: ACCESS, text: 'again' },
      { reset_revision: (done.revision ?? 0) - 1 },
    );
    expect(mismatch.status).toBe('busy');
    const rolled = await h.call(
      { action: 'send', session_id: id, access_id: ACCESS, text: 'second round' },
      { reset_revision: done.revision },
    );
    expect(rolled.window).toBe(1);
    expect(rolled.title).toBe('first round');
    expect(rolled.messages?.[0]?.text).toBe('second round');
    const transient = await h.start();
    const refused = await h.call({ action: 'send', session_id: transient, text: 'x' }, { reset_revision: 1 });
    expect(refused.status).toBe('busy');
  });

  it('never loses a message when discard races the first send (30 times)', async () => {
    const h = harness();
    for (let i = 0; i < 30; i += 1) {
      const id = await h.start(ACCESS);
      const [sent, discarded] = await Promise.all([
        h.call({ action: 'send', session_id: id, access_id: ACCESS, text: `message ${i}` }),
        h.call({ action: 'discard', session_id: id, access_id: ACCESS }),
      ]);
      if (discarded.status === 'ok') {
        expect(sent.status).not.toBe('ok');
        expect((await h.call({ action: 'poll', session_id: id, access_id: ACCESS })).status).toBe(
          'not_found',
        );
      } else {
        expect(discarded.status).toBe('busy');
        expect(sent.status).toBe('ok');
        const kept = await h.call({ action: 'poll', session_id: id, access_id: ACCESS });
        expect(kept.messages?.[0]?.text).toBe(`message ${i}`);
        await h.waitFor(id, idle);
        await h.call({ action: 'stop', session_id: id, access_id: ACCESS });
        await h.call({ action: 'delete', session_id: id, access_id: ACCESS });
      }
    }
  });

  it('discards an empty idle session', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    expect((await h.call({ action: 'discard', session_id: id, access_id: ACCESS })).status).toBe('ok');
    expect((await h.call({ action: 'poll', session_id: id, access_id: ACCESS })).status).toBe('not_found');
  });

  it('serializes a turn timing of 0 ms, and omits timing before any turn', async () => {
    const frozen: SessionClock = { monotonic: () => 1_000, wall: () => Date.now() };
    const h = harness(undefined, frozen);
    const id = await h.start(ACCESS);
    const fresh = toWire(await h.call({ action: 'poll', session_id: id, access_id: ACCESS }));
    expect(fresh.turn_timing).toBeUndefined();
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
    const done = toWire(await h.waitFor(id, idle));
    expect(done.turn_timing).toEqual({ dispatch_ms: 0, first_reply_ms: 0, finished_ms: 0 });
  });

  it('closes with session_closed when the agent crashes, and refuses further sends', async () => {
    const h = harness({ rules: [{ steps: [{ type: 'reply', text: 'bye', deltas: 1 }, { type: 'crash' }] }] });
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
    const closed = await h.waitFor(id, (s) => s.closed === true);
    expect(closed.status).toBe('session_closed');
    expect((await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'more' })).status).toBe(
      'busy',
    );
  });

  it('marks a failed turn turn_failed but keeps the session open', async () => {
    const h = harness({ rules: [{ steps: [{ type: 'fail' }] }] });
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
    const done = await h.waitFor(id, idle);
    expect(done).toMatchObject({ status: 'turn_failed' });
    expect(done.closed).toBeFalsy();
  });

  it('forgets a transient session after stop, and caps live sessions at 4', async () => {
    const h = harness();
    const transient = await h.start();
    expect((await h.call({ action: 'stop', session_id: transient })).status).toBe('session_closed');
    expect((await h.call({ action: 'poll', session_id: transient })).status).toBe('not_found');
    const ids = [];
    for (let i = 0; i < Limits.EDGE_LIVE_SESSIONS_MAX; i += 1) ids.push(await h.start(ACCESS));
    const over = await h.call({
      action: 'start',
      installation_id: SCRIPTED_INSTALLATION.id,
      project: home,
      access_id: ACCESS,
    });
    expect(over.status).toBe('busy');
    const listed = await h.call({ action: 'sessions', access_id: ACCESS });
    expect(listed.sessions?.map((s) => s.session_id).sort()).toEqual([...ids].sort());
    expect(
      (await h.call({ action: 'sessions', access_id: ACCESS }, { actor_id: '2' })).sessions ?? [],
    ).toHaveLength(0);
    await h.sessions.shutdown();
    expect(h.sessions.liveSessions).toBe(0);
  });

  it('validates start: relative project, unknown installation, working directory outside the roots', async () => {
    const h = harness();
    const base = { action: 'start' as const, installation_id: SCRIPTED_INSTALLATION.id };
    expect((await h.call({ ...base, project: 'relative/path' })).status).toBe('invalid_request');
    expect((await h.call({ ...base, project: join(home, 'missing') })).status).toBe('invalid_request');
    expect((await h.call({ ...base, installation_id: 'f'.repeat(32), project: home })).status).toBe(
      'not_found',
    );
    expect((await h.call({ ...base, project: home, working_directory: '/' })).status).toBe('invalid_request');
    const ok = await h.call({ ...base, project: home, working_directory: home });
    expect(ok.project).toBe(home);
    expect((await h.call({ action: 'transcript', session_id: ok.session_id })).status).toBe(
      'upgrade_required',
    );
    expect((await h.call({ action: 'bogus' as never })).status).toBe('invalid_request');
  });
});
