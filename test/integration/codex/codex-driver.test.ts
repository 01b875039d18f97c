// The Codex driver against the REAL `codex app-server`, with a scripted local Responses-API fake
// as the model provider. Each test gets its own CODEX_HOME, project directory and provider.
import { jest } from '@jest/globals';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DriverError } from '../../../apps/edge-connector/src/agent/agent-driver.js';
import { createCodexDriver } from '../../../apps/edge-connector/src/agent/codex/index.js';
import { FAKE_MODEL } from '../../support/fake-provider/index.js';
import { createHarness, EventLog, runTurn, WAIT_MS, type Harness } from './codex-harness.js';
import { WHICH_ONE, writeTwice } from '../../support/edge.js';

jest.setTimeout(60_000);

const isRoot = process.getuid?.() === 0;

describe('Codex driver (real codex app-server)', () => {
  let harness: Harness;

  beforeEach(async () => {
    harness = await createHarness();
  });

  afterEach(async () => {
    await harness.cleanup();
  });

  it('refuses the root account unless allowed', async () => {
    if (!isRoot) return; // The refusal only exists for root.
    const driver = createCodexDriver({ ...harness.config, allowRoot: undefined });
    await expect(driver.discover()).rejects.toMatchObject({ status: 'unsupported_user' });
    const allowed = await createCodexDriver(harness.config).discover();
    const installation = allowed.installations[0]!;
    await expect(
      driver.open({ installation, cwd: harness.project, saved: true, onEvent: () => undefined }),
    ).rejects.toMatchObject({ status: 'unsupported_user' });
  });

  it('discovers the explicit binary with a stable id and launches after handshake and preflight', async () => {
    const first = await createCodexDriver(harness.config).discover();
    const second = await createCodexDriver(harness.config).discover();
    const explicit = first.installations.find((entry) => entry.source === 'explicit');
    expect(explicit).toMatchObject({ kind: 'codex', path: harness.config.codexPath });
    expect(explicit!.id).toMatch(/^[0-9a-f]{32}$/);
    expect(second.installations.map((entry) => entry.id)).toEqual(
      first.installations.map((entry) => entry.id),
    );

    const log = new EventLog();
    const session = await harness.open(log);
    expect(session.threadId).toMatch(/^[0-9a-f-]{36}$/);
    expect(session.model).toBe(FAKE_MODEL);
    expect(session.agentVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(session.capabilities.approvals).toBe(true);
  });

  it('refuses a tampered installation id', async () => {
    const { installations } = await createCodexDriver(harness.config).discover();
    const installation = { ...installations[0]!, id: '0'.repeat(32) };
    await expect(
      createCodexDriver(harness.config).open({
        installation,
        cwd: harness.project,
        saved: true,
        onEvent: () => undefined,
      }),
    ).rejects.toMatchObject({ status: 'launch_failed' });
  });

  it('streams a reply as message deltas of one item', async () => {
    const reply = 'Hello from the scripted provider, streamed in several pieces.';
    harness.provider.script({ kind: 'text', text: reply });
    const log = new EventLog();
    const session = await harness.open(log);

    const { turnId, status } = await runTurn(session, log, 'hello');

    expect(status).toBe('completed');
    const deltas = log.of('message_delta').filter((event) => event.turnId === turnId);
    expect(deltas.length).toBeGreaterThan(1);
    expect(new Set(deltas.map((event) => event.itemId)).size).toBe(1);
    expect(deltas.map((event) => event.text).join('')).toBe(reply);
  });

  it('runs an approved command outside the sandbox', async () => {
    const target = path.join(harness.project, 'approved.txt');
    harness.provider.script({
      kind: 'shell',
      command: `echo approved > ${target} && cat ${target}`,
      escalate: true,
    });
    const log = new EventLog();
    const session = await harness.open(log);

    const { turnId } = await session.startTurn({ text: 'write it', permissionMode: 'read-only' });
    const approval = await log.waitFor('approval_request');
    expect(approval).toMatchObject({ kind: 'command', turnId });
    expect(approval.command).toContain('echo approved');
    expect(approval.cwd).toBe(harness.project);
    await session.respondApproval(approval.nativeId, 'accept');

    await log.waitFor('request_resolved', (event) => event.nativeId === approval.nativeId);
    const done = await log.waitFor('turn_completed', (event) => event.turnId === turnId);
    expect(done.status).toBe('completed');
    expect(await readFile(target, 'utf8')).toBe('approved\n');
    const command = log
      .of('activity')
      .find((event) => event.activity.kind === 'commandExecution' && event.activity.status === 'completed');
    expect(command?.activity).toMatchObject({ exitCode: 0, output: 'approved\n' });
    // The native request is answered: a second answer is refused.
    await expect(session.respondApproval(approval.nativeId, 'accept')).rejects.toBeInstanceOf(DriverError);
  });

  it('does not run a declined command', async () => {
    const target = path.join(harness.project, 'declined.txt');
    harness.provider.script({ kind: 'shell', command: `echo no > ${target}`, escalate: true });
    const log = new EventLog();
    const session = await harness.open(log);

    const { turnId } = await session.startTurn({ text: 'write it', permissionMode: 'read-only' });
    const approval = await log.waitFor('approval_request');
    await session.respondApproval(approval.nativeId, 'decline');
    const done = await log.waitFor('turn_completed', (event) => event.turnId === turnId);

    expect(done.status).toBe('completed');
    expect(existsSync(target)).toBe(false);
    const command = log
      .of('activity')
      .filter((event) => event.activity.kind === 'commandExecution')
      .at(-1);
    expect(command?.activity.status).toBe('declined');
  });

  it('declines approvals by itself in sessions without a saved access', async () => {
    const target = path.join(harness.project, 'unsaved.txt');
    harness.provider.script({ kind: 'shell', command: `echo no > ${target}`, escalate: true });
    const log = new EventLog();
    const session = await harness.open(log, { saved: false });

    const { status } = await runTurn(session, log, 'write it');

    expect(status).toBe('completed');
    expect(log.of('approval_request')).toHaveLength(0);
    expect(existsSync(target)).toBe(false);
  });

  it('asks before a file change and reports its diff', async () => {
    const target = path.join(harness.project, 'patched.txt');
    harness.provider.script({
      kind: 'patch',
      patch: `*** Begin Patch\n*** Add File: ${target}\n+hello from apply_patch\n*** End Patch\n`,
    });
    const log = new EventLog();
    const session = await harness.open(log);

    const { turnId } = await session.startTurn({ text: 'patch it', permissionMode: 'read-only' });
    const approval = await log.waitFor('approval_request');
    expect(approval).toMatchObject({ kind: 'file_change', turnId });
    const change = log
      .of('activity')
      .find((event) => event.activity.kind === 'fileChange' && event.activity.nativeId === approval.itemId);
    expect(change?.activity.status).toBe('running');
    expect(change?.activity.changes).toEqual([
      expect.objectContaining({
        path: target,
        kind: 'add',
        diff: expect.stringContaining('hello from apply_patch'),
      }),
    ]);
    await session.respondApproval(approval.nativeId, 'accept');

    const done = await log.waitFor('turn_completed', (event) => event.turnId === turnId);
    expect(done.status).toBe('completed');
    expect(await readFile(target, 'utf8')).toBe('hello from apply_patch\n');
    const diff = await log.waitFor('turn_diff', (event) => event.turnId === turnId);
    expect(diff.diff).toContain('hello from apply_patch');
  });

  it('asks the user through an input request and forwards the answer', async () => {
    harness.provider.script(
      { kind: 'question', questions: [{ id: 'choice', ...WHICH_ONE }] },
      { kind: 'text', text: 'Thanks.' },
    );
    const log = new EventLog();
    const session = await harness.open(log);
    expect(session.capabilities.input).toBe(true);

    const { turnId } = await session.startTurn({ text: 'ask me', permissionMode: 'read-only' });
    const asked = await log.waitFor('input_request');
    expect(asked).toMatchObject({ turnId, questions: [expect.objectContaining({ id: 'choice' })] });
    await session.respondInput(asked.nativeId, { choice: ['Right'] });

    await log.waitFor('request_resolved', (event) => event.nativeId === asked.nativeId);
    const done = await log.waitFor('turn_completed', (event) => event.turnId === turnId);
    expect(done.status).toBe('completed');
    // The answer went back to the model as the tool's output.
    expect(harness.provider.requests.at(-1)?.afterTool).toBe(true);
    await expect(session.respondInput(asked.nativeId, { choice: ['Left'] })).rejects.toBeInstanceOf(
      DriverError,
    );
  });

  it('interrupts a running turn', async () => {
    harness.provider.script({ kind: 'hang', text: 'Thinking about it for a long while' });
    const log = new EventLog();
    const session = await harness.open(log);

    const { turnId } = await session.startTurn({ text: 'take your time', permissionMode: 'read-only' });
    await log.waitFor('message_delta', (event) => event.turnId === turnId);
    await session.interrupt(turnId);

    const done = await log.waitFor('turn_completed', (event) => event.turnId === turnId);
    expect(done.status).toBe('interrupted');
  });

  it('lists the models of the catalog and the skills of the project', async () => {
    const log = new EventLog();
    const session = await harness.open(log);

    expect(await session.listModels()).toEqual([{ id: FAKE_MODEL, name: 'Fake Model' }]);
    const skills = await session.listSkills();
    expect(Array.isArray(skills)).toBe(true);
    for (const skill of skills) expect(path.isAbsolute(skill.path)).toBe(true);
  });

  it('blocks a write in read-only mode and allows it in workspace-write mode', async () => {
    const target = path.join(harness.project, 'written.txt');
    harness.provider.script(...writeTwice(target));
    const log = new EventLog();
    const session = await harness.open(log);

    const readOnly = await runTurn(session, log, 'write in read-only', 'read-only');
    expect(readOnly.status).toBe('completed');
    expect(existsSync(target)).toBe(false);
    const afterReadOnly = harness.provider.requests.find((request) => request.afterTool);
    expect(afterReadOnly?.lastToolExitCode).not.toBe(0);

    const writable = await runTurn(session, log, 'write in workspace-write', 'workspace-write');
    expect(writable.status).toBe('completed');
    expect(await readFile(target, 'utf8')).toBe('allowed\n');
    expect(log.of('approval_request')).toHaveLength(0);
  });

  it('reports a closed session when the process dies mid-turn', async () => {
    harness.provider.script({ kind: 'hang', text: 'Working' });
    const log = new EventLog();
    const session = await harness.open(log);
    const pid = (session as unknown as { pid: number }).pid;

    const { turnId } = await session.startTurn({ text: 'long task', permissionMode: 'read-only' });
    await log.waitFor('message_delta', (event) => event.turnId === turnId);
    process.kill(pid, 'SIGKILL');

    const closed = await log.waitFor('closed');
    expect(closed.reason).toBeTruthy();
    await expect(session.startTurn({ text: 'again', permissionMode: 'read-only' })).rejects.toMatchObject({
      status: 'session_closed',
    });
  });

  it('resumes a thread in a new process after closing the old one', async () => {
    harness.provider.script({ kind: 'text', text: 'first answer' }, { kind: 'text', text: 'second answer' });
    const firstLog = new EventLog();
    const first = await harness.open(firstLog);
    expect((await runTurn(first, firstLog, 'remember this')).status).toBe('completed');
    const threadId = first.threadId;
    await first.close();
    await first.close(); // Idempotent.
    expect(firstLog.of('closed')).toHaveLength(0);

    const log = new EventLog();
    const resumed = await harness.open(log, { threadId });
    expect(resumed.threadId).toBe(threadId);
    expect((await runTurn(resumed, log, 'what did I say?')).status).toBe('completed');
    // The provider received the earlier conversation with the new turn.
    const last = harness.provider.requests.at(-1)!;
    const firstRequest = harness.provider.requests[0]!;
    expect(last.userMessages).toBeGreaterThan(firstRequest.userMessages);
    expect(
      log
        .of('message_delta')
        .map((event) => event.text)
        .join(''),
    ).toBe('second answer');
  });

  it('refuses to resume an unknown thread', async () => {
    const log = new EventLog();
    await expect(
      harness.open(log, { threadId: '01a23689-8810-7ae1-924f-b67a904c87a0' }),
    ).rejects.toMatchObject({
      status: 'resume_unavailable',
    });
  });

  it('never calls anything but the provider', async () => {
    harness.provider.script({ kind: 'text', text: 'ok' });
    const log = new EventLog();
    const session = await harness.open(log);
    await runTurn(session, log, 'hello');
    await harness.provider.waitForRequests(1, WAIT_MS);
    expect(harness.provider.outboundAttempts).toBe(0);
  });
});
