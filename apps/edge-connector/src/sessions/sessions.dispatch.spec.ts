// SessionsService over the scripted driver: a dispatch id runs its action at most once.
import { ACCESS, harness, idle, useScratchHome } from './sessions.spec-support.js';

useScratchHome();

describe('SessionsService with the scripted driver', () => {
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

  it('records a send accepted once its message is in the session, before the agent took the turn', async () => {
    // The agent takes 2 s to accept the turn: an edge killed meanwhile must still know after its
    // restart that this dispatch ran (the record is on disk), or a retry would send it again.
    const h = harness({ dispatch_delay_ms: 2_000, rules: [{ steps: [{ type: 'reply', text: 'ok' }] }] });
    const id = await h.start(ACCESS);
    const dispatchId = `${Date.now()}-${'d'.repeat(32)}`;
    const sending = h.call(
      { action: 'send', session_id: id, access_id: ACCESS, text: 'early' },
      { dispatch_id: dispatchId },
    );
    await h.waitFor(id, (snapshot) => snapshot.running === true);
    const status = await h.call({ action: 'dispatch_status', session_id: id }, { dispatch_id: dispatchId });
    expect(status.dispatch).toEqual({ state: 'accepted', item_id: 'm:0:0' });
    expect((await sending).status).toBe('ok');
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
});
