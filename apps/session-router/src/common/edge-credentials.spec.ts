import { jest } from '@jest/globals';
import { edgeToken, type EdgeCredentialReply } from '#contracts';
import { RpcRemoteError, RpcUnavailableError, type NatsBus } from '#messaging';
import type { RouterConfig } from '../config.js';
import { EdgeCredentials } from './edge-credentials.js';
import { EdgeCredentialsUnknownError } from './errors.js';
import type { HistoryClient } from './history.client.js';

const SECRET = 'edge-credentials-spec-secret-0123';
const EDGE = 'edge-one';
const SUBJECT = 'tether.history.edge-credential';

/** History as the router sees it: each call takes the next scripted answer. */
function credentialsWith(answers: (EdgeCredentialReply | Error)[]) {
  const call = jest.fn(() => {
    const next = answers.shift();
    if (!next) throw new Error('history was asked more often than the test expects');
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  });
  const history = { call } as unknown as HistoryClient;
  const config = { edgeSecret: SECRET } as RouterConfig;
  return { credentials: new EdgeCredentials({} as NatsBus, config, history), call };
}

describe('EdgeCredentials', () => {
  let now = 1_000_000;
  beforeEach(() => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
  });
  afterEach(() => jest.restoreAllMocks());

  it("checks a token against history's current generation, and caches the answer", async () => {
    const { credentials, call } = credentialsWith([{ generation: 2 }]);
    expect(await credentials.verify(EDGE, edgeToken(SECRET, EDGE, 2))).toBe(true);
    expect(await credentials.verify(EDGE, edgeToken(SECRET, EDGE, 1))).toBe(false);
    expect(call).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['history does not answer', new RpcUnavailableError(SUBJECT, 'timeout')],
    ['history answers that its database is down', new RpcRemoteError(SUBJECT, 'unavailable', 'retry')],
  ])(
    '%s: the last known generation still decides, and history is asked once a second',
    async (_case, outage) => {
      const { credentials, call } = credentialsWith([{ generation: 1 }, outage, outage, { generation: 2 }]);
      expect(await credentials.verify(EDGE, edgeToken(SECRET, EDGE, 1))).toBe(true);
      now += 60_000; // long past the cache's TTL: history is asked again and cannot say
      expect(await credentials.verify(EDGE, edgeToken(SECRET, EDGE, 1))).toBe(true);
      now += 999;
      expect(await credentials.verify(EDGE, edgeToken(SECRET, EDGE, 0))).toBe(false);
      expect(call).toHaveBeenCalledTimes(2);
      now += 1;
      expect(await credentials.verify(EDGE, edgeToken(SECRET, EDGE, 1))).toBe(true);
      expect(call).toHaveBeenCalledTimes(3);
      // History answers again (the edge was rotated meanwhile): its answer decides at once.
      now += 1_000;
      expect(await credentials.verify(EDGE, edgeToken(SECRET, EDGE, 1))).toBe(false);
      expect(await credentials.verify(EDGE, edgeToken(SECRET, EDGE, 2))).toBe(true);
      expect(call).toHaveBeenCalledTimes(4);
    },
  );

  it.each([
    ['history does not answer', new RpcUnavailableError(SUBJECT, 'no_responders')],
    ['history answers that its database is down', new RpcRemoteError(SUBJECT, 'unavailable', 'retry')],
  ])(
    '%s and nothing is cached: "unknown" (the edge retries), never accepted blind',
    async (_case, outage) => {
      const { credentials } = credentialsWith([outage]);
      await expect(credentials.verify(EDGE, edgeToken(SECRET, EDGE, 0))).rejects.toBeInstanceOf(
        EdgeCredentialsUnknownError,
      );
    },
  );

  it('a deleted connector refuses every token; any other failure of history is not hidden', async () => {
    const gone = credentialsWith([new RpcRemoteError(SUBJECT, 'connector_not_found', 'gone')]);
    expect(await gone.credentials.verify(EDGE, edgeToken(SECRET, EDGE, 0))).toBe(false);
    const broken = credentialsWith([new RpcRemoteError(SUBJECT, 'internal', 'internal error 1')]);
    await expect(broken.credentials.verify(EDGE, edgeToken(SECRET, EDGE, 0))).rejects.toBeInstanceOf(
      RpcRemoteError,
    );
  });

  it('a malformed token is refused without asking history', async () => {
    const { credentials, call } = credentialsWith([]);
    expect(await credentials.verify(EDGE, '0x.abc')).toBe(false);
    expect(call).not.toHaveBeenCalled();
  });
});
