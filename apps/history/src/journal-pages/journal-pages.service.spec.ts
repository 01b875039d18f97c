import { clampLimit } from './journal-pages.service.js';

describe('clampLimit (reference orca §7 history-page limit clamp)', () => {
  it.each([
    [undefined, 40],
    [0, 1],
    [-5, 1],
    [10_000, 200],
    [Number.NaN, 40],
    [Number.POSITIVE_INFINITY, 40],
    [7.9, 7],
  ])('clamps %p to %p', (limit, expected) => {
    expect(clampLimit(limit)).toBe(expected);
  });
});
