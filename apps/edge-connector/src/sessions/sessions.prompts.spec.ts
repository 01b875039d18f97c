// SessionsService over the scripted driver: approvals and questions answered once, secrets unseen.
import { ACCESS, harness, idle, useScratchHome } from './sessions.spec-support.js';

useScratchHome();

describe('SessionsService with the scripted driver', () => {
  it('consumes an approval once, refuses a replay, and declines a request of a stale turn', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'approve me' });
    const asking = await h.waitFor(id, (s) => (s.approvals ?? []).length === 1);
    const approval = asking.approvals?.[0];
    expect(approval).toMatchObject({ kind: 'command', command: 'echo scripted', reason: 'Scripted check' });
    expect(approval?.id).toMatch(/^[0-9a-f]{32}$/);
    h.driver.emit({
      type: 'approval_request',
      turnId: 'turn-stale',
      nativeId: 99,
      kind: 'command',
      command: 'rm -rf /',
    });
    const afterStale = await h.call({ action: 'poll', session_id: id, access_id: ACCESS });
    expect(afterStale.approvals).toHaveLength(1);
    expect(afterStale.status).toBe('approval_declined');
    expect(
      (
        await h.call(
          {
            action: 'approve',
            session_id: id,
            access_id: ACCESS,
            approval_id: approval?.id,
            decision: 'accept',
          },
          { actor_id: '2' },
        )
      ).status,
    ).toBe('not_found');
    const accepted = await h.call({
      action: 'approve',
      session_id: id,
      access_id: ACCESS,
      approval_id: approval?.id,
      decision: 'accept',
    });
    expect(accepted.status).not.toBe('invalid_request');
    expect(accepted.approvals ?? []).toHaveLength(0);
    const replay = await h.call({
      action: 'approve',
      session_id: id,
      access_id: ACCESS,
      approval_id: approval?.id,
      decision: 'accept',
    });
    expect(replay.status).toBe('invalid_request');
    const done = await h.waitFor(id, idle);
    expect(done.activities?.[0]).toMatchObject({ status: 'completed', output: 'scripted\n' });
    expect(done.messages?.map((m) => m.text)).toEqual([
      'approve me',
      'I need to run a command first.',
      'Done.',
    ]);
  });

  it('auto-declines approvals for a transient session', async () => {
    const h = harness();
    const id = await h.start();
    await h.call({ action: 'send', session_id: id, text: 'approve me' });
    const done = await h.waitFor(id, idle, '');
    expect(done.status).toBe('approval_declined');
    expect(done.activities?.[0]?.status).toBe('declined');
    expect(
      (await h.call({ action: 'approve', session_id: id, approval_id: 'c'.repeat(32), decision: 'accept' }))
        .status,
    ).toBe('upgrade_required');
  });
});

describe('SessionsService with the scripted driver', () => {
  it('refuses an answer outside the options and sends nothing; echoes a valid one', async () => {
    const h = harness();
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'ask me' });
    const asking = await h.waitFor(id, (s) => (s.input_requests ?? []).length === 1);
    const input = asking.input_requests?.[0];
    const wrong = await h.call({
      action: 'answer',
      session_id: id,
      access_id: ACCESS,
      input_id: input?.id,
      answers: [{ question_id: 'choice', answers: ['maybe'] }],
    });
    expect(wrong.status).toBe('invalid_request');
    const still = await h.call({ action: 'poll', session_id: id, access_id: ACCESS });
    expect(still.input_requests).toHaveLength(1);
    expect(still.running).toBe(true);
    const right = await h.call({
      action: 'answer',
      session_id: id,
      access_id: ACCESS,
      input_id: input?.id,
      answers: [{ question_id: 'choice', answers: ['yes'] }],
    });
    expect(right.status).toBe('ok');
    const replay = await h.call({
      action: 'answer',
      session_id: id,
      access_id: ACCESS,
      input_id: input?.id,
      answers: [{ question_id: 'choice', answers: ['yes'] }],
    });
    expect(replay.status).toBe('invalid_request');
    const done = await h.waitFor(id, idle);
    expect(done.messages?.[1]?.text).toBe('You answered yes.');
    expect(done.activities?.[0]).toMatchObject({
      kind: 'userInput',
      status: 'completed',
      output: 'Which option do you pick? → yes',
    });
  });

  it('shows a secret answer as [hidden] and never puts it in any snapshot', async () => {
    const h = harness({
      rules: [
        {
          steps: [
            { type: 'input', questions: [{ id: 'pw', question: 'Password?', is_secret: true }] },
            { type: 'reply', text: 'Got {answer}.' },
          ],
        },
      ],
    });
    const id = await h.start(ACCESS);
    await h.call({ action: 'send', session_id: id, access_id: ACCESS, text: 'go' });
    const asking = await h.waitFor(id, (s) => (s.input_requests ?? []).length === 1);
    const answered = await h.call({
      action: 'answer',
      session_id: id,
      access_id: ACCESS,
      input_id: asking.input_requests?.[0]?.id,
      answers: [{ question_id: 'pw', answers: ['hunter2-very-secret'] }],
    });
    expect(answered.status).toBe('ok');
    const done = await h.waitFor(id, idle);
    expect(done.activities?.[0]?.output).toBe('Password? → [hidden]');
    expect(JSON.stringify(done)).not.toContain('hunter2');
    expect(h.sink.changes.some((change) => JSON.stringify(change).includes('hunter2'))).toBe(false);
  });
});
