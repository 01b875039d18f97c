import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EdgeAgentRequest, EdgeAgentResult, EdgeAgentRPCRequest, Installation } from '#contracts';
import { hashId } from '../common/random.js';
import { loadEdgeConfig, type AgentKind, type EdgeConfig } from '../config.js';
import { BINDINGS_FILE } from '../sessions/bindings.js';
import { SessionsService } from '../sessions/sessions.service.js';
import {
  DriverError,
  type AgentDriver,
  type AgentSession,
  type DiscoveryResult,
  type OpenSessionOptions,
} from './agent-driver.js';
import { CompositeDriver } from './composite-driver.js';
import { createAgentDriver } from './driver-registry.js';
import { DEFAULT_SCRIPT, SCRIPTED_INSTALLATION, ScriptedDriver } from './scripted/index.js';

/**
 * A small driver of one kind: its own installation, sessions played by the scripted agent, and a
 * record of every open so a test sees which driver a session went to.
 */
class FakeDriver implements AgentDriver {
  readonly installation: Installation;
  readonly opened: { installation: string; threadId?: string }[] = [];
  closed = 0;
  discoverError?: Error;
  found = true;
  private readonly scripted = new ScriptedDriver(DEFAULT_SCRIPT);

  constructor(readonly kind: string) {
    this.installation = { id: hashId(kind, `/opt/${kind}`), kind, path: `/opt/${kind}`, source: 'path' };
  }

  discover(): Promise<DiscoveryResult> {
    if (this.discoverError) return Promise.reject(this.discoverError);
    return Promise.resolve({ installations: this.found ? [{ ...this.installation }] : [], truncated: false });
  }

  async open(options: OpenSessionOptions): Promise<AgentSession> {
    if (options.installation.id !== this.installation.id)
      throw new DriverError('launch_failed', `not a ${this.kind} installation`);
    this.opened.push({
      installation: options.installation.id,
      ...(options.threadId ? { threadId: options.threadId } : {}),
    });
    return this.scripted.open({ ...options, installation: SCRIPTED_INSTALLATION });
  }

  close(): Promise<void> {
    this.closed += 1;
    return this.kind === 'claude' ? Promise.reject(new Error('close failed')) : Promise.resolve();
  }
}

const BASE_ENV = { TETHER_EDGE_ID: '12', TETHER_EDGE_TOKEN: 't', TETHER_EDGE_DATA_DIR: '/data/edge' };
let warn: jest.SpiedFunction<Logger['warn']>;
beforeEach(() => {
  Logger.overrideLogger(false);
  warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
});
afterEach(() => warn.mockRestore());

describe('TETHER_AGENT', () => {
  it.each([
    [undefined, ['scripted']],
    ['codex', ['codex']],
    ['claude', ['claude']],
    ['codex,claude,acp', ['codex', 'claude', 'acp']],
    [' claude , codex ', ['claude', 'codex']],
  ])('reads %j as %j', (value, agents) => {
    expect(loadEdgeConfig({ ...BASE_ENV, TETHER_AGENT: value }).agents).toEqual(agents);
  });

  it.each([
    ['an unknown agent', 'codex,gpt', /TETHER_AGENT: names an unknown agent \(gpt\)/],
    ['a duplicate', 'codex,claude,codex', /TETHER_AGENT: names an agent twice/],
    ['scripted beside a real agent', 'scripted,codex', /TETHER_AGENT: `scripted` runs alone/],
    ['an empty entry', 'codex,,claude', /TETHER_AGENT: must not have an empty entry/],
    ['an empty value', '', /TETHER_AGENT: must not have an empty entry/],
  ])('refuses %s', (_what, value, message) => {
    expect(() => loadEdgeConfig({ ...BASE_ENV, TETHER_AGENT: value })).toThrow(message);
  });
});

describe('the driver registry', () => {
  const config = (agents: AgentKind[]): EdgeConfig => ({ ...loadEdgeConfig(BASE_ENV), agents });

  it('returns the one configured driver as it is', async () => {
    const codex = new FakeDriver('codex');
    expect(await createAgentDriver(config(['codex']), () => Promise.resolve(codex))).toBe(codex);
  });

  it('leaves out a driver that does not load, logging it once, and keeps the others', async () => {
    const driver = await createAgentDriver(config(['codex', 'claude', 'acp']), (kind) =>
      kind === 'acp'
        ? Promise.reject(new Error('the ACP SDK is not installed'))
        : Promise.resolve(new FakeDriver(kind)),
    );
    expect(driver).toBeInstanceOf(CompositeDriver);
    expect(driver.kinds).toEqual(['codex', 'claude']);
    expect((await driver.discover()).installations.map((entry) => entry.kind)).toEqual(['codex', 'claude']);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toMatch(/acp driver did not load: the ACP SDK is not installed/);
  });

  it('refuses to start when no configured driver loads', async () => {
    await expect(
      createAgentDriver(config(['codex', 'claude']), (kind) =>
        Promise.reject(new Error(`${kind} is broken`)),
      ),
    ).rejects.toThrow(/TETHER_AGENT=codex,claude, but no driver loaded: .*codex is broken.*claude is broken/);
  });
});

const open = (driver: AgentDriver, installation: Installation): Promise<AgentSession> =>
  driver.open({ installation, cwd: '/', saved: false, onEvent: () => undefined });

describe('the composite driver', () => {
  it('discovers the union of its drivers and opens each installation with its own driver', async () => {
    const codex = new FakeDriver('codex');
    const claude = new FakeDriver('claude');
    const composite = new CompositeDriver([codex, claude]);
    const { installations, truncated } = await composite.discover();
    expect(installations).toEqual([codex.installation, claude.installation]);
    expect(truncated).toBe(false);

    const claudeSession = await open(composite, claude.installation);
    const codexSession = await open(composite, codex.installation);
    expect(claude.opened).toEqual([{ installation: claude.installation.id }]);
    expect(codex.opened).toEqual([{ installation: codex.installation.id }]);
    // A resume goes to the same driver, with the native thread.
    await composite.open({
      installation: claude.installation,
      cwd: '/',
      saved: true,
      threadId: claudeSession.threadId,
      onEvent: () => undefined,
    });
    expect(claude.opened.at(-1)).toEqual({
      installation: claude.installation.id,
      threadId: claudeSession.threadId,
    });
    expect(codex.opened).toHaveLength(1);
    await Promise.all([claudeSession.close(), codexSession.close()]);
  });

  it('discovers before opening an installation it has not seen, and refuses one nobody has', async () => {
    const codex = new FakeDriver('codex');
    const composite = new CompositeDriver([codex, new FakeDriver('claude')]);
    await (await open(composite, codex.installation)).close();
    expect(codex.opened).toHaveLength(1);
    const stranger = { ...codex.installation, id: 'f'.repeat(32) };
    await expect(open(composite, stranger)).rejects.toMatchObject({ status: 'launch_failed' });
    // The id alone is not enough: the kind must be the one that driver discovered.
    await expect(open(composite, { ...codex.installation, kind: 'claude' })).rejects.toMatchObject({
      status: 'launch_failed',
    });
  });

  it('keeps serving the other kinds when one driver fails or finds nothing, and logs each change once', async () => {
    const codex = new FakeDriver('codex');
    const claude = new FakeDriver('claude');
    const acp = new FakeDriver('acp');
    const composite = new CompositeDriver([codex, claude, acp]);
    claude.discoverError = new Error('claude discovery broke');
    acp.found = false;
    for (let i = 0; i < 3; i += 1) {
      expect((await composite.discover()).installations).toEqual([codex.installation]);
    }
    expect(warn.mock.calls.map((call) => String(call[0]))).toEqual([
      "The claude driver's discovery failed: claude discovery broke.",
      'The acp driver found no installation.',
    ]);
    await expect(open(composite, claude.installation)).rejects.toMatchObject({ status: 'launch_failed' });

    claude.discoverError = undefined;
    expect((await composite.discover()).installations).toEqual([codex.installation, claude.installation]);
    await (await open(composite, claude.installation)).close();
    expect(claude.opened).toHaveLength(1);
  });
});

describe('the composite driver', () => {
  it("fails discovery with the first driver's error only when every driver fails", async () => {
    const codex = new FakeDriver('codex');
    const claude = new FakeDriver('claude');
    codex.discoverError = new DriverError('unsupported_user', 'root');
    claude.discoverError = new DriverError('unsupported_user', 'root');
    await expect(new CompositeDriver([codex, claude]).discover()).rejects.toMatchObject({
      status: 'unsupported_user',
    });
  });

  it('closes every driver even when one fails to close', async () => {
    const drivers = [new FakeDriver('codex'), new FakeDriver('claude'), new FakeDriver('acp')];
    await new CompositeDriver(drivers).close();
    expect(drivers.map((driver) => driver.closed)).toEqual([1, 1, 1]);
  });

  it('refuses two drivers of one kind', () => {
    expect(() => new CompositeDriver([new FakeDriver('codex'), new FakeDriver('codex')])).toThrow(/one kind/);
  });
});

/** An edge serving a Codex and a Claude fake driver through one CompositeDriver. */
function multiKindEdge(homeDir: string, dataDir: string, project: string) {
  const drivers = { codex: new FakeDriver('codex'), claude: new FakeDriver('claude') };
  const sessions = new SessionsService(
    new CompositeDriver([drivers.codex, drivers.claude]),
    { homeDir, unsupportedUser: false, dataDir },
    { changed: () => undefined },
  );
  const call = (
    request: Partial<EdgeAgentRequest> & { action: EdgeAgentRequest['action'] },
    extra: Partial<EdgeAgentRPCRequest> = {},
  ): Promise<EdgeAgentResult> =>
    sessions.handle(
      { version: 1, actor_id: '1', project_root: project, ...extra, request: { edge_id: '1', ...request } },
      new AbortController().signal,
    );
  return { drivers, sessions, call };
}

describe('sessions of several kinds on one edge', () => {
  const ACCESS = 'a'.repeat(32);
  let base: string;
  beforeAll(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'edge-composite-')));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const edge = (dataDir: string, project: string) => multiKindEdge(base, dataDir, project);

  it('records the kind in the binding and resumes each session with its own driver after a restart', async () => {
    const dir = mkdtempSync(join(base, 'case-'));
    const project = join(dir, 'project');
    const dataDir = join(dir, 'data');
    mkdirSync(project);
    const first = edge(dataDir, project);
    const found = await first.call({ action: 'discover' });
    expect(found.installations?.map((entry) => entry.kind)).toEqual(['codex', 'claude']);
    const ids: Record<string, { session: string; last: EdgeAgentResult }> = {};
    for (const driver of [first.drivers.codex, first.drivers.claude]) {
      const started = await first.call({
        action: 'start',
        installation_id: driver.installation.id,
        project,
        access_id: ACCESS,
      });
      expect(started.status).toBe('ok');
      const session = started.session_id!;
      ids[driver.kind] = {
        session,
        last: await first.call({ action: 'stop', session_id: session, access_id: ACCESS }),
      };
    }
    const stored = JSON.parse(readFileSync(join(dataDir, BINDINGS_FILE), 'utf8')) as {
      bindings: { session: string; kind?: string; installation_id: string }[];
    };
    expect(Object.fromEntries(stored.bindings.map((binding) => [binding.session, binding.kind]))).toEqual({
      [ids.codex!.session]: 'codex',
      [ids.claude!.session]: 'claude',
    });
    await first.sessions.shutdown();

    const restarted = edge(dataDir, project);
    for (const kind of ['claude', 'codex'] as const) {
      const { session, last } = ids[kind]!;
      const resumed = await restarted.call(
        { action: 'resume', session_id: session, access_id: ACCESS },
        { resume: { session_id: session, revision: last.revision!, messages: [] } },
      );
      expect(resumed).toMatchObject({ status: 'ok', session_id: session, thread_id: last.thread_id });
      expect(restarted.drivers[kind].opened).toEqual([
        { installation: restarted.drivers[kind].installation.id, threadId: last.thread_id },
      ]);
    }
    await restarted.sessions.shutdown();

    // A binding whose kind no longer matches its installation is not relaunched with another driver.
    const tampered = JSON.parse(readFileSync(join(dataDir, BINDINGS_FILE), 'utf8')) as {
      version: number;
      bindings: { session: string; kind?: string }[];
    };
    for (const binding of tampered.bindings) binding.kind = 'acp';
    writeFileSync(join(dataDir, BINDINGS_FILE), JSON.stringify(tampered), { mode: 0o600 });
    const third = edge(dataDir, project);
    const { session, last } = ids.codex!;
    const refused = await third.call(
      { action: 'resume', session_id: session, access_id: ACCESS },
      { resume: { session_id: session, revision: last.revision! + 1, messages: [] } },
    );
    expect(refused.status).toBe('resume_unavailable');
    expect(third.drivers.codex.opened).toEqual([]);
    await third.sessions.shutdown();
  });
});
