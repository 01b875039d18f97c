import { jest } from '@jest/globals';
import { Logger, type ArgumentsHost } from '@nestjs/common';
import { firstValueFrom } from 'rxjs';
import { RpcErrorFilter, ServiceError, type OutageRule } from './rpc-errors.js';

class StoreDown extends Error {}

const outage: OutageRule = {
  isOutage: (exception) => exception instanceof StoreDown,
  describe: () => 'Store unavailable',
  answer: () => new ServiceError('unavailable', 'The store is down; retry shortly.'),
};
const host = {} as ArgumentsHost;

describe('RpcErrorFilter', () => {
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('answers a ServiceError with its code, and its message only when exposed', async () => {
    const filter = new RpcErrorFilter();
    await expect(
      firstValueFrom(filter.catch(new ServiceError('not_found', 'No such session.'), host)),
    ).resolves.toEqual({
      error: { code: 'not_found', message: 'No such session.' },
    });
    await expect(
      firstValueFrom(filter.catch(new ServiceError('conflict', 'row 42 of table x', false), host)),
    ).resolves.toEqual({
      error: { code: 'conflict', message: 'conflict' },
    });
  });

  it('answers anything else internal with an error id only', async () => {
    const reply = await firstValueFrom(new RpcErrorFilter().catch(new Error('secret detail'), host));
    expect(reply.error.code).toBe('internal');
    expect(reply.error.message).toMatch(/^internal error [0-9a-f-]{36}$/);
  });

  it("answers an outage of the service's store with the rule's retryable answer", async () => {
    const filter = new RpcErrorFilter(outage);
    await expect(firstValueFrom(filter.catch(new StoreDown('connection refused'), host))).resolves.toEqual({
      error: { code: 'unavailable', message: 'The store is down; retry shortly.' },
    });
    // Other failures are unaffected by the rule.
    const other = await firstValueFrom(filter.catch(new Error('bug'), host));
    expect(other.error.code).toBe('internal');
  });
});
