// One edge with TETHER_AGENT=codex,claude, driven only through edge_agent_v1 over the shared NATS:
// the real `codex app-server` against the Responses-API fake and the real `claude` CLI against the
// Messages-API fake, side by side. Discovery lists both kinds, each start runs with its own
// driver, and after an edge restart each resume relaunches the right binary on its own thread.
import { jest } from '@jest/globals';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type EdgeAgentResult, type EdgeHeartbeat } from '#contracts';
import { decodeJson } from '#messaging';
import { type RunningEdge } from '../../../apps/edge-connector/src/app.js';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/index.js';
import {
  FAKE_API_KEY_ENV,
  prepareCodexHome,
  startFakeProvider,
  type FakeProvider,
} from '../../support/fake-provider/index.js';
import { claudeBinary, claudeEdgeEnv } from '../claude/claude-harness.js';
import { codexBinary } from '../codex/codex-harness.js';
import { AgentEdgeBus, killAgentsIn } from '../../support/edge.js';

jest.setTimeout(120_000);

/** Every wait on either CLI is bounded by this. */
const WAIT_MS = 30_000;
const EDGE_ID = '4747';
const KINDS = ['codex', 'claude'] as const;
type Kind = (typeof KINDS)[number];

const bus = new AgentEdgeBus(EDGE_ID, 'multiagent');
let base: string;
let project: string;
let codexProvider: FakeProvider;
let claudeProvider: FakeAnthropic;
let edge: RunningEdge | undefined;
const updates = bus.updates;
const heartbeats: EdgeHeartbeat[] = [];

const rpc = bus.rpc.bind(bus);

function bootEdge(): Promise<RunningEdge> {
  const proxy = `http://127.0.0.1:${codexProvider.port}`;
  return bus.start(
    {
      TETHER_AGENT: 'codex,claude',
      TETHER_EDGE_DATA_DIR: path.join(base, 'data'),
      TETHER_CODEX_PATH: codexBinary(),
      TETHER_CODEX_HOME: path.join(base, 'codex-home'),
      TETHER_CODEX_ENV_ALLOW: FAKE_API_KEY_ENV,
      TETHER_CLAUDE_PATH: claudeBinary(),
      ...claudeEdgeEnv(claudeProvider, path.join(base, 'home')),
      [FAKE_API_KEY_ENV]: 'fake-key',
      // Anything either CLI tries to reach besides its provider lands on the Codex fake, which refuses it.
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      NO_PROXY: '127.0.0.1,localhost',
    },
    WAIT_MS,
  );
}

beforeAll(async () => {
  await bus.open();
  bus.nc.subscribe(bus.subjects.edgeHeartbeatOf(EDGE_ID), {
    callback: (_error, msg) => {
      heartbeats.push(decodeJson<EdgeHeartbeat>(msg.data));
    },
  });
  await bus.nc.flush();
  [codexProvider, claudeProvider] = await Promise.all([startFakeProvider(), startFakeAnthropic()]);
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-multi-agent-')));
  project = path.join(base, 'project');
  await Promise.all([mkdir(project), mkdir(path.join(base, 'home'))]);
  await prepareCodexHome(path.join(base, 'codex-home'), codexProvider);
  edge = await bootEdge();
});

afterAll(async () => {
  await edge?.close();
  if (base) killAgentsIn(base);
  await Promise.all([codexProvider?.stop(), claudeProvider?.stop()]);
  await bus.close();
  if (base) await rm(base, { recursive: true, force: true });
});

const on = (sessionId: string) => ({ session_id: sessionId, access_id: bus.access });

const lastAssistant = (snapshot: EdgeAgentResult): string =>
  snapshot.messages?.filter((message) => message.role === 'assistant').at(-1)?.text ?? '';

/** Watches, as a client would, until the turn is over; bounded by WAIT_MS. */
async function untilIdle(sessionId: string): Promise<EdgeAgentResult> {
  const deadline = Date.now() + WAIT_MS;
  let snapshot = await rpc({ action: 'poll', ...on(sessionId) });
  while (snapshot.running) {
    if (Date.now() > deadline) throw new Error(`The turn did not finish: ${JSON.stringify(snapshot)}`);
    snapshot = await rpc({ action: 'watch', ...on(sessionId), cursor: String(snapshot.revision) });
  }
  expect(snapshot.turn_timing?.finished_ms).toEqual(expect.any(Number));
  return snapshot;
}

/** Sends to both sessions at once and waits for both replies. */
async function turnOnBoth(
  ids: Record<Kind, string>,
  text: Record<Kind, string>,
): Promise<Record<Kind, string>> {
  for (const kind of KINDS) {
    expect(await rpc({ action: 'send', ...on(ids[kind]), text: text[kind] })).toMatchObject({ status: 'ok' });
  }
  const [codex, claude] = await Promise.all(KINDS.map((kind) => untilIdle(ids[kind])));
  return { codex: lastAssistant(codex!), claude: lastAssistant(claude!) };
}

const textRequests = () => ({
  codex: codexProvider.requests.length,
  claude: claudeProvider.requests.filter((request) => request.step === 'text').length,
});

describe('one edge driving Codex and Claude Code side by side', () => {
  it('discovers both, runs a session on each, and resumes each with its own driver after a restart', async () => {
    codexProvider.script(
      { kind: 'text', text: 'Codex will remember swordfish.' },
      { kind: 'text', text: 'Codex says swordfish.' },
    );
    claudeProvider.script(
      { kind: 'text', text: 'Claude will remember marlin.' },
      { kind: 'text', text: 'Claude says marlin.' },
    );

    const discovered = await rpc({ action: 'discover' });
    expect(discovered.status).toBe('ok');
    const kinds = new Set(discovered.installations?.map((entry) => entry.kind));
    expect([...kinds].sort()).toEqual(['claude', 'codex']);
    const explicit = (kind: Kind): string =>
      discovered.installations!.find((entry) => entry.kind === kind && entry.source === 'explicit')!.id;

    const ids = {} as Record<Kind, string>;
    const threads = {} as Record<Kind, string>;
    for (const kind of KINDS) {
      const started = await rpc(
        { action: 'start', installation_id: explicit(kind), project, access_id: bus.access },
        { project_root: project },
      );
      expect(started).toMatchObject({ status: 'ok', revision: 1 });
      ids[kind] = started.session_id!;
      threads[kind] = started.thread_id!;
    }
    // Capabilities are the kind's own: only Codex offers permission modes (reference §3).
    expect((await rpc({ action: 'poll', ...on(ids.codex) })).permissions_available).toBe(true);
    expect((await rpc({ action: 'poll', ...on(ids.claude) })).permissions_available).toBeFalsy();
    // The heartbeat announces both kinds.
    const deadline = Date.now() + WAIT_MS;
    while (!heartbeats.some((beat) => beat.agent_kinds.length === 2) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(heartbeats.at(-1)?.agent_kinds).toEqual(['codex', 'claude']);

    expect(await turnOnBoth(ids, { codex: 'remember swordfish', claude: 'remember marlin' })).toEqual({
      codex: 'Codex will remember swordfish.',
      claude: 'Claude will remember marlin.',
    });
    // Each turn reached its own provider, once.
    expect(textRequests()).toEqual({ codex: 1, claude: 1 });

    await edge!.close();
    edge = undefined;
    edge = await bootEdge();
    for (const kind of KINDS) {
      const last = updates.filter((update) => update.session_id === ids[kind]).at(-1)!.snapshot;
      expect(last).toMatchObject({ closed: true, status: 'session_closed' });
      const resumed = await rpc(
        { action: 'resume', ...on(ids[kind]) },
        {
          project_root: project,
          resume: {
            session_id: ids[kind],
            messages: last.messages?.map((message) => ({ role: message.role, text: message.text })),
            activities: last.activities,
            started_at: last.started_at,
            revision: last.revision!,
          },
        },
      );
      expect(resumed).toMatchObject({ status: 'ok', session_id: ids[kind], thread_id: threads[kind] });
    }

    expect(await turnOnBoth(ids, { codex: 'which word?', claude: 'which word?' })).toEqual({
      codex: 'Codex says swordfish.',
      claude: 'Claude says marlin.',
    });
    expect(textRequests()).toEqual({ codex: 2, claude: 2 });
    // Each binary resumed its own conversation: the second request carried the first turn.
    expect(codexProvider.requests[1]!.userMessages).toBeGreaterThan(codexProvider.requests[0]!.userMessages);
    const claudeTurns = claudeProvider.requests.filter((request) => request.step === 'text');
    expect(claudeTurns[1]!.userMessages).toBe(claudeTurns[0]!.userMessages + 1);
  });
});
