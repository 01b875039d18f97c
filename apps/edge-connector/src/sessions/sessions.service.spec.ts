// SessionsService over the scripted driver: a session's life from start to stop, crash or discard.
import { join } from 'node:path';
import { Limits, toWire } from '#contracts';
import { SCRIPTED_INSTALLATION } from '../agent/scripted/index.js';
import type { SessionClock } from './turn-state.js';
import { ACCESS, OTHER_ACCESS, harness, home, idle, useScratchHome } from './sessions.spec-support.js';

useScratchHome();

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
});

describe('SessionsService with the scripted driver', () => {
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
});

describe('SessionsService with the scripted driver', () => {
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
});

describe('SessionsService with the scripted driver', () => {
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
