// The reference's Codex adapter cases (its §7 "Codex adapter", docs/reference-tests.md), checked on the
// exact JSON-RPC frames the edge writes. A tiny fake app-server (a node child speaking JSON lines)
// logs every frame it receives, so each test asserts what Codex itself would be sent.
import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent } from '../agent-driver.js';
import { installationId } from './codex-discovery.js';
import { CodexSession } from './codex-session.js';

/** The fake app-server: answers the session start, then plays FAKE_REQUESTS after `turn/start`. */
const FAKE_APP_SERVER = `
import { createInterface } from 'node:readline';
import { appendFileSync } from 'node:fs';
const env = process.env;
const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
const parse = (name, fallback) => (env[name] === undefined ? fallback : JSON.parse(env[name]));
const config = parse('FAKE_CONFIG', { config: {} });
const mcp = parse('FAKE_MCP', { data: [] });
const requests = parse('FAKE_REQUESTS', []);
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  appendFileSync(env.FAKE_LOG, line + '\\n');
  const message = JSON.parse(line);
  if (message.method === undefined || message.id === undefined) return;
  const reply = (result) =>
    result === 'error'
      ? send({ id: message.id, error: { code: -32000, message: 'refused' } })
      : send({ id: message.id, result });
  switch (message.method) {
    case 'initialize': return reply({ userAgent: 'fake' });
    case 'account/read': return reply({ account: { type: 'apiKey' }, requiresOpenaiAuth: false });
    case 'config/read': return reply(config);
    case 'thread/start':
    case 'thread/resume':
      return reply({ thread: { id: 'thread-1', cliVersion: '0.0.1', model: 'thread-model' }, model: 'm0' });
    case 'mcpServerStatus/list': return reply(mcp);
    case 'turn/start':
      reply({ turn: { id: 'turn-1' } });
      for (const request of requests) send(request);
      return;
    default: return reply('error');
  }
});
lines.on('close', () => process.exit(0));
`;

interface Frame {
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
}

let base: string;
beforeAll(() => {
  Logger.overrideLogger(false);
  base = realpathSync(mkdtempSync(join(tmpdir(), 'codex-reference-')));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

interface Fake {
  session: CodexSession;
  events: AgentEvent[];
  frames(): Frame[];
  /** Waits (bounded) until a logged frame matches. */
  frame(predicate: (frame: Frame) => boolean): Promise<Frame>;
}

const opened: CodexSession[] = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((session) => session.close()));
});

async function fake(env: Record<string, unknown> = {}, saved = true): Promise<Fake> {
  const logFile = join(mkdtempSync(join(base, 'case-')), 'frames.jsonl');
  writeFileSync(logFile, '');
  const events: AgentEvent[] = [];
  const childEnv: Record<string, string> = { FAKE_LOG: logFile };
  for (const [name, value] of Object.entries(env)) childEnv[name] = JSON.stringify(value);
  const session = await CodexSession.open({
    spec: {
      command: process.execPath,
      args: ['--input-type=module', '-e', FAKE_APP_SERVER],
      cwd: base,
      env: childEnv,
    },
    options: {
      installation: { id: 'f'.repeat(32), kind: 'codex', path: '/fake/codex', source: 'explicit' },
      cwd: base,
      saved,
      onEvent: (event) => events.push(event),
    },
  });
  opened.push(session);
  const frames = (): Frame[] =>
    readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as Frame);
  const frame = async (predicate: (frame: Frame) => boolean): Promise<Frame> => {
    for (let i = 0; i < 200; i += 1) {
      const found = frames().find(predicate);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('the fake app-server never received the expected frame');
  };
  return { session, events, frames, frame };
}

async function until<T>(probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 200; i += 1) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not reached');
}

const T = { threadId: 'thread-1', turnId: 'turn-1' };
const commandRequest = (id: string | number) => ({
  id,
  method: 'item/commandExecution/requestApproval',
  params: { ...T, itemId: `item-${id}`, command: 'ls -la', cwd: '/p', reason: 'look' },
});
const inputRequest = (id: string | number) => ({
  id,
  method: 'item/tool/requestUserInput',
  params: {
    ...T,
    itemId: `input-${id}`,
    questions: [{ id: 'q1', question: 'Which?', options: [{ label: 'Yes' }, { label: 'No' }] }],
  },
});
const plainTurn = { text: 'go', permissionMode: 'read-only' as const };

describe('Codex adapter cases of the reference', () => {
  describe('TestCommandApprovalIsOnceOnly', () => {
    it('answers exactly {"decision":"accept"} under the native id, once', async () => {
      const f = await fake({ FAKE_REQUESTS: [commandRequest('req-7'), commandRequest(42)] });
      await f.session.startTurn(plainTurn);
      await until(() =>
        f.events.filter((e) => e.type === 'approval_request').length === 2 ? true : undefined,
      );
      await f.session.respondApproval('req-7', 'accept');
      await f.session.respondApproval(42, 'decline');
      const accepted = await f.frame((frame) => frame.id === 'req-7' && frame.result !== undefined);
      expect(accepted).toEqual({ id: 'req-7', result: { decision: 'accept' } });
      const declined = await f.frame((frame) => frame.id === 42 && frame.result !== undefined);
      expect(declined).toEqual({ id: 42, result: { decision: 'decline' } });
      // A replay never reaches Codex a second time.
      await expect(f.session.respondApproval('req-7', 'accept')).rejects.toMatchObject({
        status: 'invalid_request',
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(f.frames().filter((frame) => frame.id === 'req-7' && frame.result !== undefined)).toHaveLength(
        1,
      );
    });

    it('keeps one pending approval for a duplicated native id', async () => {
      const f = await fake({ FAKE_REQUESTS: [commandRequest(5), commandRequest(5)] });
      await f.session.startTurn(plainTurn);
      await until(() => (f.events.some((e) => e.type === 'approval_request') ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(f.events.filter((e) => e.type === 'approval_request')).toHaveLength(1);
      // The duplicate was neither surfaced nor answered on its own.
      expect(f.frames().filter((frame) => frame.id === 5 && frame.result !== undefined)).toHaveLength(0);
    });

    it('never answers a request through the path of the other kind', async () => {
      const f = await fake({ FAKE_REQUESTS: [commandRequest('cmd'), inputRequest('ask')] });
      await f.session.startTurn(plainTurn);
      await until(() => (f.events.some((e) => e.type === 'input_request') ? true : undefined));
      await expect(f.session.respondInput('cmd', { q1: ['Yes'] })).rejects.toMatchObject({
        status: 'invalid_request',
      });
      await expect(f.session.respondApproval('ask', 'accept')).rejects.toMatchObject({
        status: 'invalid_request',
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(f.frames().filter((frame) => frame.result !== undefined)).toEqual([]);
      // Both are still answerable through their own path.
      await f.session.respondApproval('cmd', 'decline');
      await f.session.respondInput('ask', { q1: ['No'] });
      await f.frame((frame) => frame.id === 'ask' && frame.result !== undefined);
    });

    it('declines by itself for a session without a saved access', async () => {
      const f = await fake({ FAKE_REQUESTS: [commandRequest(9)] }, false);
      await f.session.startTurn(plainTurn);
      expect(await f.frame((frame) => frame.id === 9 && frame.result !== undefined)).toEqual({
        id: 9,
        result: { decision: 'decline' },
      });
      expect(f.events.some((e) => e.type === 'approval_request')).toBe(false);
    });
  });
});

describe('Codex adapter cases of the reference', () => {
  describe('TestInputAnswerPreservesNativeRequestID', () => {
    it.each([['a string id', 'input-req-1'] as const, ['a numeric id', 77] as const])(
      'answers under %s, with one answer list per question',
      async (_label, id) => {
        const f = await fake({ FAKE_REQUESTS: [inputRequest(id)] });
        await f.session.startTurn(plainTurn);
        const asked = await until(() => f.events.find((e) => e.type === 'input_request'));
        expect(asked).toMatchObject({ nativeId: id, turnId: 'turn-1' });
        await f.session.respondInput(id, { q1: ['Yes'] });
        const answer = await f.frame((frame) => frame.id === id && frame.result !== undefined);
        expect(answer).toEqual({ id, result: { answers: { q1: { answers: ['Yes'] } } } });
      },
    );
  });

  describe('TestPreviewExternalToolsFailClosed', () => {
    const server = (extra: Record<string, unknown>) => ({
      name: 'docs',
      runtimeStatus: 'disabled',
      tools: {},
      ...extra,
    });
    const shapes: [string, Record<string, unknown>][] = [
      ['an enabled server', { FAKE_MCP: { data: [server({ runtimeStatus: 'ready' })] } }],
      ['a server with no status', { FAKE_MCP: { data: [{ name: 'docs', tools: {} }] } }],
      ['a disabled server that still has tools', { FAKE_MCP: { data: [server({ tools: { search: {} } })] } }],
      ['a second page', { FAKE_MCP: { data: [server({})], nextCursor: 'more' } }],
      ['no data list', { FAKE_MCP: {} }],
      ['an entry that is not an object', { FAKE_MCP: { data: ['docs'] } }],
      ['a refused status call', { FAKE_MCP: 'error' }],
      ['a refused config read', { FAKE_CONFIG: 'error' }],
      ['a config without a config object', { FAKE_CONFIG: { layers: [] } }],
      [
        'an integration name that cannot be addressed',
        { FAKE_CONFIG: { config: { mcp_servers: { 'a.b': { command: 'x' } } } } },
      ],
      [
        'more integrations than can be disabled',
        {
          FAKE_CONFIG: {
            config: { plugins: Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`p${i}`, {}])) },
          },
        },
      ],
    ];

    it.each(shapes)('refuses to start with %s (external_tools)', async (_label, env) => {
      await expect(fake(env)).rejects.toMatchObject({ status: 'external_tools' });
    });

    it('starts when every server is disabled with no tools, on one page', async () => {
      const f = await fake({ FAKE_MCP: { data: [server({}), server({ name: 'b', tools: undefined })] } });
      expect(f.session.threadId).toBe('thread-1');
    });
  });
});

describe('Codex adapter cases of the reference', () => {
  describe('TestPreviewOverrides_OnlyRestrictsIntegrations', () => {
    it('forwards only switches that turn integrations off, never model, provider, keys or commands', async () => {
      const local = {
        config: {
          model: 'o-local',
          model_provider: 'corp',
          model_providers: { corp: { base_url: 'https://corp.example', env_key: 'CORP_KEY' } },
          api_key: 'sk-local-secret',
          approval_policy: 'never',
          sandbox_mode: 'danger-full-access',
          mcp_servers: { docs: { command: '/usr/bin/docs-mcp', env: { TOKEN: 'mcp-secret' } } },
          plugins: { helper: { enabled: true } },
        },
      };
      const f = await fake({ FAKE_CONFIG: local });
      const start = await f.frame((frame) => frame.method === 'thread/start');
      expect(start.params).toEqual({
        cwd: base,
        sandbox: 'read-only',
        approvalPolicy: 'on-request',
        ephemeral: false,
        serviceName: 'tether',
        config: {
          'features.apps': false,
          'features.default_mode_request_user_input': true,
          'mcp_servers.docs.enabled': false,
          'plugins.helper.enabled': false,
        },
      });
      const sent = JSON.stringify(f.frames().filter((frame) => frame.method !== undefined));
      for (const secret of ['o-local', 'corp', 'sk-local-secret', 'docs-mcp', 'mcp-secret', 'never']) {
        expect(sent).not.toContain(secret);
      }
    });
  });

  describe('TestAttachmentsUseNativeImageInputAndKeepModel', () => {
    it('sends the images as localImage inputs and keeps the selected model', async () => {
      const f = await fake();
      await f.session.startTurn({
        text: 'look',
        permissionMode: 'read-only',
        model: 'gpt-picked',
        images: ['/snapshots/a.png', '/snapshots/b.gif'],
      });
      const turn = await f.frame((frame) => frame.method === 'turn/start');
      expect(turn.params).toEqual({
        threadId: 'thread-1',
        input: [
          { type: 'text', text: 'look', text_elements: [] },
          { type: 'localImage', path: '/snapshots/a.png' },
          { type: 'localImage', path: '/snapshots/b.gif' },
        ],
        approvalPolicy: 'on-request',
        sandboxPolicy: { type: 'readOnly', networkAccess: false },
        model: 'gpt-picked',
      });
      expect(f.session.model).toBe('gpt-picked');
    });
  });

  describe('TestOwnerIsolationAndLiveTranscript: stop kills the process', () => {
    it('ends the app-server process when the session closes', async () => {
      const f = await fake();
      const pid = f.session.pid as number;
      expect(() => process.kill(pid, 0)).not.toThrow();
      await f.session.close();
      expect(() => process.kill(pid, 0)).toThrow();
    });
  });
});

describe('Codex adapter cases of the reference', () => {
  describe('resume_test: the installation id includes the kind', () => {
    it('hashes the kind with both paths, so another kind at the same path gets another id', () => {
      const id = (kind: string) =>
        createHash('sha256')
          .update(`${kind}\0/bin/agent\0/opt/agent`)
          .digest()
          .subarray(0, 16)
          .toString('hex');
      expect(installationId('/bin/agent', '/opt/agent')).toBe(id('codex'));
      expect(installationId('/bin/agent', '/opt/agent')).not.toBe(id('claude'));
    });
  });
});
