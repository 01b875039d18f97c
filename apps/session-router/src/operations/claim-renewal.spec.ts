import { jest } from '@jest/globals';
import { ClaimRenewal, renewalIntervalMs } from './claim-renewal.js';

describe('ClaimRenewal', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** Lets the renewal's pending promise callbacks run after a timer fired. */
  const settle = async () => {
    for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
  };

  it('renews three times per claim length', () => {
    expect(renewalIntervalMs(9_000)).toBe(3_000);
    expect(renewalIntervalMs(500)).toBe(166);
  });

  it('renews every interval until stopped, and never after', async () => {
    const renew = jest.fn(() => Promise.resolve(true));
    const renewal = new ClaimRenewal(renew, 100, () => undefined);
    await jest.advanceTimersByTimeAsync(99);
    expect(renew).toHaveBeenCalledTimes(0);
    await jest.advanceTimersByTimeAsync(1);
    await settle();
    await jest.advanceTimersByTimeAsync(100);
    await settle();
    expect(renew).toHaveBeenCalledTimes(2);
    renewal.stop();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(renew).toHaveBeenCalledTimes(2);
  });

  it('stops once the claim is no longer this run’s', async () => {
    const renew = jest.fn(() => Promise.resolve(false));
    new ClaimRenewal(renew, 100, () => undefined);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(renew).toHaveBeenCalledTimes(1);
  });

  it('reports a failed renewal and tries again at the next interval', async () => {
    const renew = jest
      .fn<() => Promise<boolean>>()
      .mockRejectedValueOnce(new Error('redis down'))
      .mockResolvedValue(true);
    const errors: unknown[] = [];
    const renewal = new ClaimRenewal(renew, 100, (error) => errors.push(error));
    await jest.advanceTimersByTimeAsync(100);
    await settle();
    await jest.advanceTimersByTimeAsync(100);
    await settle();
    expect(errors).toEqual([new Error('redis down')]);
    expect(renew).toHaveBeenCalledTimes(2);
    renewal.stop();
  });

  it('never runs two renewals at once when one is slow', async () => {
    let inFlight = 0;
    let most = 0;
    const renew = jest.fn(async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 350));
      inFlight -= 1;
      return true;
    });
    const renewal = new ClaimRenewal(renew, 100, () => undefined);
    await jest.advanceTimersByTimeAsync(1_000);
    renewal.stop();
    expect(most).toBe(1);
    // At 100, 550 (450 + 100) and 1,000 (900 + 100): each waits for the one before.
    expect(renew).toHaveBeenCalledTimes(3);
  });
});
