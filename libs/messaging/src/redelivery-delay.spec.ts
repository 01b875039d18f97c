import { redeliveryDelay } from './jetstream.js';

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
