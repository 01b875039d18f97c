// The Claude Code driver on its own, against the REAL `claude` CLI and the scripted Messages-API
// fake: account rules, sign-in, discovery by looking at files only, launch and resume refusals,
// the private state directory. Each test gets its own state directory, project and provider.
import { jest } from '@jest/globals';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AgentEvent, AgentSession } from '../../../apps/edge-connector/src/agent/agent-driver.js';
import {
  claudeInstallationId,
  createClaudeDriver,
  type ClaudeDriverConfig,
} from '../../../apps/edge-connector/src/agent/claude/index.js';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/index.js';
import { claudeBinary, claudeEdgeEnv, WAIT_MS } from './claude-harness.js';

jest.setTimeout(120_000);

const isRoot = process.getuid?.() === 0;

let provider: FakeAnthropic;
let base: string;
let project: string;
let home: string;
let config: ClaudeDriverConfig;
const sessions: AgentSession[] = [];

beforeEach(async () => {
  provider = await startFakeAnthropic();
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-claude-driver-')));
  project = path.join(base, 'project');
  home = path.join(base, 'home');
  await Promise.all([mkdir(project), mkdir(home)]);
  config = {
    claudePath: claudeBinary(),
    allowRoot: true,
    stateDir: path.join(base, 'state'),
    environment: claudeEdgeEnv(provider, home),
    localDirs: [],
  };
});

afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.close()));
  await provider.stop();
  await rm(base, { recursive: true, force: true });
});

async function openSession(
  overrides: Partial<ClaudeDriverConfig> = {},
  extra: { threadId?: string; onEvent?: (event: AgentEvent) => void } = {},
): Promise<AgentSession> {
  const driver = createClaudeDriver({ ...config, ...overrides });
  const { installations } = await createClaudeDriver(config).discover();
  const installation = installations.find((entry) => entry.source === 'explicit')!;
  const session = await driver.open({
    installation,
    cwd: project,
    saved: true,
    onEvent: extra.onEvent ?? (() => undefined),
    ...(extra.threadId ? { threadId: extra.threadId } : {}),
  });
  sessions.push(session);
  return session;
}

function untilCompleted(events: AgentEvent[], turnId: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (events.some((event) => event.type === 'turn_completed' && event.turnId === turnId)) resolve();
      else if (Date.now() > deadline) reject(new Error('the turn did not complete'));
      else setTimeout(check, 50);
    };
    check();
  });
}

describe('Claude Code driver (real claude CLI)', () => {
  it('refuses the root account unless allowed', async () => {
    if (!isRoot) return; // The refusal only exists for root.
    const refused = createClaudeDriver({ ...config, allowRoot: undefined });
    await expect(refused.discover()).rejects.toMatchObject({ status: 'unsupported_user' });
    const { installations } = await createClaudeDriver(config).discover();
    await expect(
      refused.open({ installation: installations[0]!, cwd: project, saved: true, onEvent: () => undefined }),
    ).rejects.toMatchObject({ status: 'unsupported_user' });
  });

  it('discovers by looking at files: links to the binary count, wrappers do not and never run', async () => {
    const bin = path.join(base, 'bin');
    const wrappers = path.join(base, 'wrappers');
    await Promise.all([mkdir(bin), mkdir(wrappers)]);
    await symlink(claudeBinary(), path.join(bin, 'claude'));
    // A wrapper script (the old `~/.claude/local/claude`, an asdf shim): executing it would leave a mark.
    const mark = path.join(base, 'executed');
    await writeFile(path.join(wrappers, 'claude'), `#!/bin/sh\ntouch ${mark}\n`);
    await chmod(path.join(wrappers, 'claude'), 0o755);
    const driver = createClaudeDriver({
      ...config,
      claudePath: undefined,
      environment: { ...config.environment, PATH: `${wrappers}:${bin}`, HOME: home },
    });
    const { installations } = await driver.discover();
    const onPath = installations.filter((entry) => entry.source === 'path');
    const resolved = await realpath(claudeBinary());
    expect(onPath).toEqual([
      {
        id: claudeInstallationId(path.join(bin, 'claude'), resolved),
        kind: 'claude',
        path: path.join(bin, 'claude'),
        source: 'path',
      },
    ]);
    // The identity includes the kind: the same path as a Codex installation would differ.
    expect(onPath[0]!.id).toMatch(/^[0-9a-f]{32}$/);
    expect(installations.some((entry) => (entry.path ?? '').startsWith(wrappers))).toBe(false);
    expect(existsSync(mark)).toBe(false);
  });

  it('refuses a tampered installation id', async () => {
    const { installations } = await createClaudeDriver(config).discover();
    const installation = { ...installations[0]!, id: '0'.repeat(32) };
    await expect(
      createClaudeDriver(config).open({ installation, cwd: project, saved: true, onEvent: () => undefined }),
    ).rejects.toMatchObject({ status: 'launch_failed' });
  });

  it('answers authentication_required without a key or a sign-in', async () => {
    const environment = { ...config.environment, ANTHROPIC_API_KEY: undefined };
    await expect(openSession({ environment })).rejects.toMatchObject({ status: 'authentication_required' });
  });

  it('keeps its state in the private directory and talks to nobody but the provider', async () => {
    const events: AgentEvent[] = [];
    const session = await openSession({}, { onEvent: (event) => events.push(event) });
    expect(session.agentVersion).toMatch(/^\d+\.\d+\.\d+$/);
    expect(session.capabilities).toMatchObject({ attachments: false, permissions: false, approvals: true });
    const { turnId } = await session.startTurn({ text: 'hello', permissionMode: 'read-only' });
    await untilCompleted(events, turnId);
    expect(events.filter((event) => event.type === 'message_delta').length).toBeGreaterThan(1);
    expect(await readdir(config.stateDir)).toEqual(expect.arrayContaining(['projects']));
    expect(await readdir(home)).toEqual([]);
    expect(provider.otherRequests).toBe(0);
    expect(provider.requests.length).toBeGreaterThan(0);
  });

  it('refuses to resume a conversation it does not have, and an id it never issued', async () => {
    await expect(openSession({}, { threadId: '00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject(
      { status: 'resume_unavailable' },
    );
    await expect(openSession({}, { threadId: '--dangerously-skip-permissions' })).rejects.toMatchObject({
      status: 'resume_unavailable',
    });
  });
});
