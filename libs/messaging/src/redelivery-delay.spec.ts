import { redeliveryDelay, RetryPolicy } from './jetstream.js';

describe('redeliveryDelay', () => {
  it('waits the base on the first delivery and doubles per delivery after it', () => {
    expect([1, 2, 3, 4].map((count) => redeliveryDelay(count, 250, 30_000))).toEqual([
      250, 500, 1_000, 2_000,
    ]);
  });

  it('never passes the cap, however many deliveries (no overflow to Infinity)', () => {
    expect(redeliveryDelay(8, 250, 30_000)).toBe(30_000);
    expect(redeliveryDelay(10_000, 250, 30_000)).toBe(30_000);
  });

  it('treats a missing or zero delivery count as the first', () => {
    expect(redeliveryDelay(0, 2_000, 60_000)).toBe(2_000);
  });
});

describe('RetryPolicy', () => {
  const policy = new RetryPolicy(250, 5_000, 10);

  it('delays as redeliveryDelay does with its bounds', () => {
    expect([1, 2, 5, 6, 50].map((attempt) => policy.delay(attempt))).toEqual([250, 500, 4_000, 5_000, 5_000]);
  });

  it('logs the first failed attempt and then every warnEvery-th only', () => {
    const logged = Array.from({ length: 30 }, (_, i) => i + 1).filter((attempt) => policy.warns(attempt));
    expect(logged).toEqual([1, 10, 20, 30]);
  });
});
