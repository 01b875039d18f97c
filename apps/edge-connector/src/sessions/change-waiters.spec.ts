import { ChangeWaiters } from './change-waiters.js';

describe('ChangeWaiters', () => {
  it('wakes the current waiters only, and ends a wait on timeout or abort', async () => {
    const waiters = new ChangeWaiters();
    const controller = new AbortController();
    let woken = false;
    const first = waiters.wait(60_000, controller.signal).then(() => (woken = true));
    waiters.wakeAll();
    await first;
    expect(woken).toBe(true);

    const started = Date.now();
    await waiters.wait(20, controller.signal);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);

    const aborted = waiters.wait(60_000, controller.signal);
    controller.abort();
    await aborted;
  });
});
