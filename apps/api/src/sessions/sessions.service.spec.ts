import { formatCursor, parseCursor, SessionsService } from './sessions.service.js';
import type { ServiceClient } from '../common/service-client.js';
import type { Authorizer } from '../common/authorizer.js';
import type { Principal } from '../auth/principal.js';

describe('journal page query', () => {
  const sessions = new SessionsService({} as ServiceClient, {} as Authorizer);

  it('reads the opaque cursor at its last colon, and writes it back the same way', () => {
    expect(parseCursor('e:1:42')).toEqual({ epoch: 'e:1', sequence: 42 });
    expect(formatCursor({ epoch: 'e:1', sequence: 42 })).toBe('e:1:42');
    for (const bad of ['', 'e', ':3', 'e:', 'e:-1', 'e:01', 'e:1.5', `e:${'9'.repeat(17)}`]) {
      expect(parseCursor(bad)).toBeNull();
    }
  });

  it('keeps the limit strict at the boundary: 1 and 200 pass, 0 and 201 are refused', () => {
    expect(sessions.pageQuery(undefined, undefined, undefined)).toEqual({ direction: 'tail', limit: 40 });
    expect(sessions.pageQuery('after', 'e:0', '1')).toEqual({
      direction: 'after',
      cursor: { epoch: 'e', sequence: 0 },
      limit: 1,
    });
    expect(sessions.pageQuery('before', undefined, '200').limit).toBe(200);
    for (const limit of ['0', '201', '-1', '1.5', 'x', '', ['1', '2']]) {
      expect(() => sessions.pageQuery('tail', undefined, limit)).toThrow();
    }
    expect(() => sessions.pageQuery('sideways', undefined, undefined)).toThrow();
  });
});

describe('journal page reads', () => {
  const principal = (actorId: string) => ({ actorId }) as Principal;
  const scope = { sessionId: 's1', edgeId: '1', accessId: 'a1' };
  const after = { direction: 'after' as const, cursor: { epoch: 'e', sequence: 3 }, limit: 200 };

  /** A stand-in history whose answers the test releases; records every request it got. */
  function history() {
    const asked: unknown[] = [];
    const answers: ((value: unknown) => void)[] = [];
    const failures: ((error: Error) => void)[] = [];
    const client = {
      history: (_name: string, payload: unknown) => {
        asked.push(payload);
        return new Promise((resolve, reject) => {
          answers.push(resolve);
          failures.push(reject);
        });
      },
    } as unknown as ServiceClient;
    return { asked, answers, failures, sessions: new SessionsService(client, {} as Authorizer) };
  }

  it('shares one history read between identical reads in flight, and none once it is answered', async () => {
    const { asked, answers, sessions } = history();
    const reads = [1, 2, 3].map(() => sessions.page(principal('alice'), scope, after));
    expect(asked).toHaveLength(1);
    answers[0]!({ ok: true, marker: 1 });
    expect(await Promise.all(reads)).toEqual([1, 2, 3].map(() => ({ ok: true, marker: 1 })));
    const later = sessions.page(principal('alice'), scope, after);
    expect(asked).toHaveLength(2);
    answers[1]!({ ok: true, marker: 2 });
    expect(await later).toEqual({ ok: true, marker: 2 });
  });

  it('never shares between owners, sessions or queries', () => {
    const { asked, sessions } = history();
    void sessions.page(principal('alice'), scope, after);
    void sessions.page(principal('bob'), scope, after);
    void sessions.page(principal('alice'), { ...scope, sessionId: 's2' }, after);
    void sessions.page(principal('alice'), scope, { ...after, cursor: { epoch: 'e', sequence: 4 } });
    void sessions.page(principal('alice'), scope, { ...after, limit: 40 });
    expect(asked).toHaveLength(5);
  });

  it('hands a failure to every read that shared it, then asks again', async () => {
    const { asked, failures, answers, sessions } = history();
    const reads = [1, 2].map(() => sessions.page(principal('alice'), scope, after));
    failures[0]!(new Error('history is down'));
    for (const read of reads) await expect(read).rejects.toThrow('history is down');
    const again = sessions.page(principal('alice'), scope, after);
    expect(asked).toHaveLength(2);
    answers[1]!({ ok: true });
    await expect(again).resolves.toEqual({ ok: true });
  });
});
