import { RevisionWaiters } from './revision-waiters.js';

describe('RevisionWaiters', () => {
  it('wakes only waiters below the new revision and forgets disposed ones', async () => {
    const waiters = new RevisionWaiters();
    const low = waiters.register('s1', 3);
    const high = waiters.register('s1', 9);
    expect(waiters.size).toBe(2);
    waiters.notify('s1', 4);
    await expect(low.wait(1_000)).resolves.toBe(true);
    await expect(high.wait(10)).resolves.toBe(false);
    // The notice that woke it is remembered; a later one does not replace it.
    waiters.notify('s1', 7);
    expect(low.revision()).toBe(4);
    expect(high.revision()).toBeUndefined();
    low.dispose();
    high.dispose();
    high.dispose();
    expect(waiters.size).toBe(0);
  });

  it('knows no revision when woken for another reason (its edge went offline)', async () => {
    const waiters = new RevisionWaiters();
    const waiter = waiters.register('s1', 1);
    waiter.wake();
    waiters.notify('s1', 5);
    await expect(waiter.wait(1_000)).resolves.toBe(true);
    expect(waiter.revision()).toBeUndefined();
    waiter.dispose();
  });

  it('ignores notices for other sessions', async () => {
    const waiters = new RevisionWaiters();
    const waiter = waiters.register('s1', 1);
    waiters.notify('s2', 5);
    await expect(waiter.wait(10)).resolves.toBe(false);
    waiter.dispose();
  });
});
