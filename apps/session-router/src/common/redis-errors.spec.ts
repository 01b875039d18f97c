import { isRedisUnavailable } from './redis-errors.js';

describe('Redis errors that answer "unavailable"', () => {
  it.each([
    ['CLUSTERDOWN The cluster is down'],
    ['TRYAGAIN Multiple keys request during rehashing of slot'],
    ['READONLY You can not write against a read only replica.'],
    ['LOADING Redis is loading the dataset in memory'],
    ['Connection is closed.'],
    ['Too many Cluster redirections. Last error: Error: Connection is closed.'],
    ['All sentinels are unreachable. Retrying from scratch after 10ms.'],
  ])('%s', (message) => {
    expect(isRedisUnavailable(new Error(message))).toBe(true);
  });

  it('counts a refused connection and an exhausted retry budget', () => {
    expect(
      isRedisUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
    ).toBe(true);
    const exhausted = new Error('Reached the max retries per request limit (which is 2).');
    exhausted.name = 'MaxRetriesPerRequestError';
    expect(isRedisUnavailable(exhausted)).toBe(true);
  });

  it('leaves real defects alone: a cross-slot script, a wrong type, a script error, a non-error', () => {
    expect(isRedisUnavailable(new Error("CROSSSLOT Keys in request don't hash to the same slot"))).toBe(
      false,
    );
    expect(
      isRedisUnavailable(new Error('WRONGTYPE Operation against a key holding the wrong kind of value')),
    ).toBe(false);
    expect(isRedisUnavailable(new Error('ERR Error running script'))).toBe(false);
    expect(isRedisUnavailable('Connection is closed.')).toBe(false);
  });
});
