import { RpcRemoteError } from '#messaging';
import type { NatsBus } from '#messaging';
import { Authorizer } from './authorizer.js';
import type { ApiConfig } from '../config.js';
import type { ServiceClient } from './service-client.js';

/** History whose answers the test releases one request at a time. */
function history() {
  const asked: unknown[] = [];
  const answers: { resolve: (value: unknown) => void; reject: (error: Error) => void }[] = [];
  const services = {
    history: (_name: string, payload: unknown) => {
      asked.push(payload);
      return new Promise((resolve, reject) => answers.push({ resolve, reject }));
    },
  } as unknown as ServiceClient;
  const config = { authorizeCacheMs: 2_000, authorizeOutageMs: 60_000 } as ApiConfig;
  return { asked, answers, authorizer: new Authorizer(services, {} as NatsBus, config) };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
const query = { actorId: 'alice', edgeId: '1001', accessId: 'a'.repeat(32) };
const yes = { ok: true };

describe('Authorizer', () => {
  it('answers fresh checks asked while a request is in flight from one request sent after them', async () => {
    const { asked, answers, authorizer } = history();
    const first = authorizer.authorize(query, { fresh: true });
    const waiting = [1, 2, 3].map(() => authorizer.authorize(query, { fresh: true }));
    expect(asked).toHaveLength(1);
    // History granted the first request; the access is deleted before the next one is answered.
    answers[0]!.resolve(yes);
    await expect(first).resolves.toEqual(yes);
    await flush();
    expect(asked).toHaveLength(2);
    answers[1]!.reject(new RpcRemoteError('history.authorize', 'access_not_found', 'gone'));
    for (const check of waiting) await expect(check).rejects.toThrow('access_not_found');
  });

  it('does not hand a check asked after a grants-changed notice the answer of a request sent before it', async () => {
    const { asked, answers, authorizer } = history();
    const before = authorizer.authorize(query);
    authorizer.forget('alice');
    const after = authorizer.authorize(query);
    answers[0]!.resolve(yes);
    await expect(before).resolves.toEqual(yes);
    await flush();
    expect(asked).toHaveLength(2);
    answers[1]!.reject(new RpcRemoteError('history.authorize', 'connector_not_found', 'gone'));
    await expect(after).rejects.toThrow('connector_not_found');
  });

  it('keeps actors and accesses apart', () => {
    const { asked, authorizer } = history();
    void authorizer.authorize(query, { fresh: true });
    void authorizer.authorize({ ...query, actorId: 'bob' }, { fresh: true });
    void authorizer.authorize({ ...query, accessId: 'b'.repeat(32) }, { fresh: true });
    expect(asked).toHaveLength(3);
  });
});
