import { jest } from '@jest/globals';
import type { EdgeAgentRequest } from '#contracts';
import type { LeaseTouch, LeasesRepository } from './leases.repository.js';
import { LEASE_RENEWAL_INTERVAL_MS, LeasesService } from './leases.service.js';

const SESSION = 'a'.repeat(32);
const poll: EdgeAgentRequest = {
  edge_id: '7',
  action: 'poll',
  session_id: SESSION,
  access_id: 'b'.repeat(32),
};

describe('LeasesService.touch', () => {
  let writes: LeaseTouch[];
  let failNext: boolean;
  let service: LeasesService;

  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
    writes = [];
    failNext = false;
    const repository = {
      touch: (touch: LeaseTouch) => {
        if (failNext) {
          failNext = false;
          return Promise.reject(new Error('redis down'));
        }
        writes.push(touch);
        return Promise.resolve(0);
      },
    } as unknown as LeasesRepository;
    service = new LeasesService(repository);
  });
  afterEach(() => jest.useRealTimers());

  it('writes a renewal once per interval for the same owner, edge and access', async () => {
    await service.touch('alice', poll);
    await service.touch('alice', poll);
    expect(writes).toHaveLength(1);
    jest.advanceTimersByTime(LEASE_RENEWAL_INTERVAL_MS);
    await service.touch('alice', poll);
    expect(writes).toHaveLength(2);
    expect(writes[1]).toMatchObject({
      sessionId: SESSION,
      ownerId: 'alice',
      now: 1_000_000 + LEASE_RENEWAL_INTERVAL_MS,
    });
  });

  it('always writes a fresh runtime age, and a different owner, edge or access', async () => {
    await service.touch('alice', poll);
    await service.touch('alice', { ...poll, action: 'resume' });
    await service.touch('bob', poll);
    await service.touch('bob', { ...poll, access_id: undefined });
    expect(writes.map((write) => [write.ownerId, write.resetAge, write.accessId])).toEqual([
      ['alice', false, poll.access_id],
      ['alice', true, poll.access_id],
      ['bob', false, poll.access_id],
      ['bob', false, undefined],
    ]);
  });

  it('tries again on the next action when a write failed', async () => {
    failNext = true;
    await service.touch('alice', poll);
    await service.touch('alice', poll);
    expect(writes).toHaveLength(1);
  });

  it('never writes for actions that do not renew', async () => {
    await service.touch('alice', { ...poll, action: 'sessions' });
    expect(writes).toHaveLength(0);
  });
});
