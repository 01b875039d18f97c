import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { result, sealedJournalEntrySchema } from '#contracts';
import { decodeJson, encodeJson, JournalCipher, JournalSealError, requestService } from '#messaging';
import { testJournalCipher, pollUntil } from '#test-support';
import type { JournalEntry, SessionUpdate } from '#contracts';
import { createSuite, ROUTER_POLL, sessionId, sessionUpdate, type Suite } from '../../support/router.js';

describe('router session updates', () => {
  let suite: Suite;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    suite = await createSuite('sessupdate');
    await suite.startRouter();
    jsm = await jetstreamManager(suite.nc);
  });
  afterAll(async () => {
    await suite.cleanup();
  });

  const send = (update: SessionUpdate) =>
    requestService(suite.nc, suite.subjects, 'routerSessionUpdate', update, { timeoutMs: 10_000 });
  const storedCount = async (sid: string) => {
    const info = await jsm.streams.info(suite.subjects.sessionsStream, {
      subjects_filter: suite.subjects.sessionJournal(sid),
    });
    return info.state.subjects?.[suite.subjects.sessionJournal(sid)] ?? 0;
  };

  it('refuses a bad edge token and stores nothing', async () => {
    const sid = sessionId();
    await expect(
      send(sessionUpdate({ session_id: sid, revision: 1, edge_token: 'forged' })),
    ).rejects.toMatchObject({
      code: 'invalid_request',
    });
    expect(await storedCount(sid)).toBe(0);
    expect(await suite.keys(`${suite.namespace}:{${sid}}:*`)).toEqual([]);
  });

  it('refuses an update that names another edge than the subject it came on, even with that edge’s token', async () => {
    const sid = sessionId();
    // Edge 101's valid update, published on edge 102's subject (what edge 102 could send if it
    // had stolen 101's token): the subject names the publisher, NATS permissions see to that.
    const reply = decodeJson(
      (
        await suite.nc.request(
          suite.subjects.sessionUpdateOf('102'),
          encodeJson(sessionUpdate({ session_id: sid, revision: 1, edge_id: '101' })),
          { timeout: 10_000 },
        )
      ).data,
    );
    expect(reply).toMatchObject({ error: { code: 'invalid_request' } });
    expect(await storedCount(sid)).toBe(0);
  });

  it('stores the journal entry in JetStream before acknowledging, with a dedup id', async () => {
    const sid = sessionId();
    const notices: unknown[] = [];
    const sub = suite.nc.subscribe(suite.subjects.sessionRevision(sid), {
      callback: (_error, msg) => {
        notices.push(decodeJson(msg.data));
      },
    });
    await suite.nc.flush();
    const update = sessionUpdate({
      session_id: sid,
      revision: 2,
      access_id: 'c'.repeat(32),
      snapshot: result('ok', {
        session_id: sid,
        revision: 2,
        running: true,
        messages: [{ role: 'user', text: 'hello' }],
        approvals: [{ id: 'ap1' }],
        models: [{ id: 'm1' }],
      }),
    });
    const ack = await send(update);
    expect(ack).toMatchObject({ ok: true, sequence: 1, duplicate: false });

    const message = await jsm.streams.getMessage(suite.subjects.sessionsStream, {
      last_by_subj: suite.subjects.sessionJournal(sid),
    });
    expect(message?.subject).toBe(suite.subjects.sessionJournal(sid));
    expect(message?.header.get('Nats-Msg-Id')).toBe(`${sid}:${ack.epoch}:2`);
    // The stored row holds the conversation only sealed: no prompt text in its bytes, and only
    // the journal key opens it.
    expect(Buffer.from(message!.data).toString('utf8')).not.toContain('hello');
    const sealed = sealedJournalEntrySchema.parse(decodeJson(message!.data));
    const entry = testJournalCipher().open(sealed) as JournalEntry;
    expect(() => new JournalCipher('some-other-deployments-journal-key-01234').open(sealed)).toThrow(
      JournalSealError,
    );
    expect(entry).toMatchObject({
      v: 1,
      session_id: sid,
      edge_id: '101',
      actor_id: 'user-1',
      epoch: ack.epoch,
      revision: 2,
    });
    expect(entry.snapshot).toEqual({
      version: 1,
      status: 'ok',
      session_id: sid,
      revision: 2,
      running: true,
      messages: [{ role: 'user', text: 'hello' }],
    });
    expect(JSON.stringify(entry)).not.toContain(update.edge_token);

    expect(await suite.redis.get(`${suite.namespace}:{${sid}}:rev`)).toBe('2');
    expect(await suite.redis.hgetall(`${suite.namespace}:{${sid}}:meta`)).toMatchObject({
      owner: 'user-1',
      edge: '101',
      access: 'c'.repeat(32),
      running: '1',
      closed: '0',
    });
    const heard = await pollUntil(
      () => notices,
      (list) => list.length > 0,
      ROUTER_POLL,
    );
    expect(heard).toEqual([{ session_id: sid, revision: 2 }]);
    sub.unsubscribe();
  });

  it('acknowledges a retried update as a duplicate and stores it once', async () => {
    const sid = sessionId();
    const update = sessionUpdate({ session_id: sid, revision: 1 });
    const first = await send(update);
    const retry = await send(update);
    expect(first.duplicate).toBe(false);
    expect(retry).toEqual({ ok: true, epoch: first.epoch, sequence: 1, duplicate: true });
    expect(await storedCount(sid)).toBe(1);
    // A later revision is a new entry in the same epoch.
    const next = await send(sessionUpdate({ session_id: sid, revision: 2 }));
    expect(next).toMatchObject({ epoch: first.epoch, duplicate: false });
    expect(await storedCount(sid)).toBe(2);
  });

  it('refuses an update for a session of another edge', async () => {
    const sid = sessionId();
    await send(sessionUpdate({ session_id: sid, revision: 1, edge_id: '101' }));
    await expect(send(sessionUpdate({ session_id: sid, revision: 2, edge_id: '102' }))).rejects.toMatchObject(
      {
        code: 'invalid_request',
      },
    );
    expect(await storedCount(sid)).toBe(1);
    expect(await suite.redis.get(`${suite.namespace}:{${sid}}:rev`)).toBe('1');
  });

  it('checks the owner and edge against the journal when Redis lost them, never the update itself', async () => {
    const sid = sessionId();
    await send(sessionUpdate({ session_id: sid, revision: 1, edge_id: '101', actor_id: 'alice' }));
    const forget = async () => {
      const keys = await suite.keys(`${suite.namespace}:{${sid}}:*`);
      if (keys.length > 0) await suite.redis.del(...keys);
    };
    await forget();
    // Another enrolled edge, with a valid token for its own id, claiming her session: as itself,
    // and in her name.
    for (const intruder of [{ actor_id: 'mallory' }, { actor_id: 'alice' }]) {
      await expect(
        send(sessionUpdate({ session_id: sid, revision: 9, edge_id: '666', ...intruder })),
      ).rejects.toMatchObject({ code: 'invalid_request' });
    }
    // Her own edge under another owner is refused too.
    await expect(
      send(sessionUpdate({ session_id: sid, revision: 9, edge_id: '101', actor_id: 'mallory' })),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    expect(await storedCount(sid)).toBe(1);
    // Nothing was bound to the intruder: her real edge goes on, and is bound again.
    await expect(
      send(sessionUpdate({ session_id: sid, revision: 2, edge_id: '101', actor_id: 'alice' })),
    ).resolves.toMatchObject({ ok: true, sequence: 2, duplicate: false });
    expect(await suite.redis.hgetall(`${suite.namespace}:{${sid}}:meta`)).toMatchObject({
      owner: 'alice',
      edge: '101',
    });
    // And with Redis lost again the intruder is still refused.
    await forget();
    await expect(
      send(sessionUpdate({ session_id: sid, revision: 10, edge_id: '666', actor_id: 'alice' })),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    expect(await storedCount(sid)).toBe(2);
  });
});
