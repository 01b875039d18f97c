// A send's window roll: only on the router's word that the window's final state is journaled.
import type { SessionChangeSink } from './sessions.service.js';
import { ACCESS, harness, idle, useScratchHome } from './sessions.spec-support.js';

useScratchHome();

describe('send with reset_revision', () => {
  it('rolls on a newer revision only once the router acked that revision to this edge', async () => {
    const h = harness();
    const asked: [string, number][] = [];
    let confirmed = false;
    (h.sink as SessionChangeSink).journaled = (sessionId, revision) => {
      asked.push([sessionId, revision]);
      return Promise.resolve(confirmed);
    };
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'first round' });
    const done = await h.waitFor(id, idle);
    const head = (done.revision ?? 0) - 2;

    const stale = await h.call(
      { action: 'send', session_id: id, access_id: ACCESS, text: 'again' },
      { reset_revision: head },
    );
    expect(stale.status).toBe('busy');
    expect(asked).toEqual([[id, done.revision]]);

    confirmed = true;
    const rolled = await h.call(
      { action: 'send', session_id: id, access_id: ACCESS, text: 'second round' },
      { reset_revision: head },
    );
    expect(rolled).toMatchObject({ status: 'ok', window: 1 });
    expect(rolled.messages?.[0]?.text).toBe('second round');
  });

  it('keeps an empty window: there is no round to archive', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    const started = await h.call({ action: 'poll', session_id: id, access_id: ACCESS });
    const sent = await h.call(
      { action: 'send', session_id: id, access_id: ACCESS, text: 'first round' },
      { reset_revision: started.revision },
    );
    expect(sent).toMatchObject({ status: 'ok', window: 0 });
    expect(sent.messages?.map((message) => message.text)).toEqual(['first round', '']);
  });
});
