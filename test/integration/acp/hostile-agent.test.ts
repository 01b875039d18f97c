// The ACP driver's bounds against a scripted hostile agent the edge owner declared: an oversize
// frame, a line that is not JSON or a flood close that agent's own session; unknown update kinds
// are ignored; file-system and terminal requests are refused (the edge declares neither). The edge
// and a second session go on every time.
import { jest } from '@jest/globals';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EdgeAgentResult } from '#contracts';
import type { RunningEdge } from '../../../apps/edge-connector/src/app.js';
import { ACCESS, EdgeBus, killAgentsIn, lastAssistant, repoRoot } from './acp-edge-harness.js';

jest.setTimeout(90_000);

const bus = new EdgeBus('4423', 'hostileacp');
const AGENT = path.join(repoRoot, 'test', 'support', 'hostile-acp-agent.mjs');
let base: string;
let edge: RunningEdge;

const bootEdge = (): Promise<RunningEdge> =>
  bus.boot({
    TETHER_EDGE_DATA_DIR: path.join(base, 'data'),
    TETHER_ACP_AGENTS: JSON.stringify([{ name: 'hostile', command: AGENT, args: [], env: [] }]),
    HOME: path.join(base, 'home'),
  });

beforeAll(async () => {
  await bus.open();
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-hostile-acp-')));
  await Promise.all(['a', 'b', 'home'].map((dir) => mkdir(path.join(base, dir))));
  edge = await bootEdge();
});

afterAll(async () => {
  await edge?.close();
  killAgentsIn(base);
  await rm(base, { recursive: true, force: true });
  await bus.close();
});

async function start(dir: string): Promise<string> {
  const discovered = await bus.rpc({ action: 'discover' });
  const declared = discovered.installations?.find((entry) => entry.source === 'configured');
  expect(declared).toMatchObject({ kind: 'acp', path: AGENT });
  const project = path.join(base, dir);
  const started = await bus.rpc(
    { action: 'start', installation_id: declared!.id, project, access_id: ACCESS },
    { project_root: project },
  );
  expect(started.status).toBe('ok');
  return started.session_id!;
}

async function turn(id: string, text: string, sendStatuses = ['ok']): Promise<EdgeAgentResult> {
  expect(sendStatuses).toContain((await bus.send(id, text)).status);
  return bus.watchUntil(id, (s) => !s.running || Boolean(s.closed), 'the turn to end');
}

/** The second session answers normally after its neighbour misbehaved. */
async function neighbourStillWorks(): Promise<void> {
  const other = await start('b');
  const done = await turn(other, 'hello');
  expect(done.closed).toBeFalsy();
  expect(lastAssistant(done)).toBe('hostile but polite');
  await bus.rpc({ action: 'stop', ...bus.on(other) });
}

describe('a hostile ACP agent', () => {
  it.each(['oversize', 'invalid', 'flood'])('closes only its own session on a %s frame', async (kind) => {
    const id = await start('a');
    // The agent may break the session before the send's own answer is written.
    expect(['ok', 'session_closed']).toContain((await bus.send(id, kind)).status);
    const done = await bus.watchUntil(id, (s) => Boolean(s.closed), 'the session to close');
    expect(done.status).toBe('session_closed');
    await neighbourStillWorks();
  });

  it('ignores unknown update kinds and keeps streaming', async () => {
    const id = await start('a');
    const done = await turn(id, 'unknown');
    expect(done.closed).toBeFalsy();
    expect(lastAssistant(done)).toBe('still fine');
  });

  it('keeps at most 8 permission cards waiting and declines the rest of a flood at once', async () => {
    const id = await start('a');
    // The session may already have declined some by the time the send answers.
    const done = await turn(id, 'permissions', ['ok', 'approval_declined']);
    // Of 40 requests 8 wait as cards (answered `cancelled` when the turn ends) and 32 are declined
    // at once; nothing is ever allowed without a person.
    expect(lastAssistant(done)).toBe('cancelled:0 rejected:32 allowed:0');
    expect(done.closed).toBeFalsy();
  });

  it('closes the session of an agent that never ends an interrupted turn, instead of hanging', async () => {
    const id = await start('a');
    expect((await bus.send(id, 'stuck')).status).toBe('ok');
    await bus.watchUntil(id, (s) => lastAssistant(s) === 'working forever', 'the first chunk');
    expect((await bus.rpc({ action: 'interrupt', ...bus.on(id) })).status).toBe('ok');
    const closed = await bus.watchUntil(id, (s) => Boolean(s.closed), 'the session to close');
    expect(closed.status).toBe('session_closed');
    await neighbourStillWorks();
  });

  it('gets no file system and no terminal from the edge', async () => {
    const id = await start('a');
    const done = await turn(id, 'client');
    expect(lastAssistant(done)).toBe('fs:-32601 terminal:-32601');
  });

  it('keeps a conversation the agent replays after answering session/load out of the next turn', async () => {
    const id = await start('a');
    expect(lastAssistant(await turn(id, 'hello'))).toBe('hostile but polite');
    await edge.close();
    edge = await bootEdge();
    const { last, seed } = bus.resumeSeed(id);
    const resumed = await bus.rpc(
      { action: 'resume', ...bus.on(id) },
      { resume: seed, project_root: path.join(base, 'a') },
    );
    expect(resumed).toMatchObject({ status: 'ok', session_id: id });
    expect(resumed.messages).toEqual(last.messages);
    // Sent at once: the agent is still replaying ("replayed answer" comes 100 ms after the load).
    const done = await turn(id, 'hello');
    expect(done.messages?.slice(-2)).toEqual([
      { role: 'user', text: 'hello' },
      { role: 'assistant', text: 'hostile but polite' },
    ]);
  });
});
