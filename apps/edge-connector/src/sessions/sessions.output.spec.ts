// SessionsService over the scripted driver: what a snapshot shows of a turn's output, and its bounds.
import { Limits } from '#contracts';
import { ACCESS, OWNER, harness, idle, jsonBytes, useScratchHome } from './sessions.spec-support.js';

useScratchHome();

describe('SessionsService with the scripted driver', () => {
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
});

describe('SessionsService with the scripted driver', () => {
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
});

describe('SessionsService with the scripted driver', () => {
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
});
