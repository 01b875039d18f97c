import { WatchBursts } from './watch-bursts.js';

describe('WatchBursts', () => {
  let now = 0;
  const bursts = () => new WatchBursts(60, () => now);
  beforeEach(() => {
    now = 1_000;
  });

  it('answers the first change of a quiet session at once', () => {
    const b = bursts();
    expect(b.delayMs('s1', 3)).toBe(0);
  });

  it('holds a client following a burst until the window after the last release ends', () => {
    const b = bursts();
    b.release('s1', 4);
    // The client got revision 4 (or later) and watches again; the next delta lands 15 ms later.
    now += 15;
    expect(b.delayMs('s1', 4)).toBe(45);
    expect(b.delayMs('s1', 6)).toBe(45);
    now += 45;
    b.release('s1', 7);
    now += 59;
    expect(b.delayMs('s1', 7)).toBe(1);
    // A change a whole window after the last release starts a new burst: at once.
    now += 1;
    expect(b.delayMs('s1', 7)).toBe(0);
  });

  it('lets a caller that has not seen the last release answer at once (another tab, same notice)', () => {
    const b = bursts();
    b.release('s1', 4);
    expect(b.delayMs('s1', 3)).toBe(0);
    expect(b.delayMs('s1', 4)).toBe(60);
  });

  it('keeps sessions apart', () => {
    const b = bursts();
    b.release('s1', 4);
    expect(b.delayMs('s2', 4)).toBe(0);
  });

  it('covers the highest revision released within a window, whatever order notices came in', () => {
    const b = bursts();
    b.release('s1', 9);
    now += 10;
    b.release('s1', 8);
    expect(b.delayMs('s1', 8)).toBe(0);
    expect(b.delayMs('s1', 9)).toBe(60);
    // Past the window a lower revision stands on its own (a session's revisions may restart).
    now += 100;
    b.release('s1', 2);
    expect(b.delayMs('s1', 2)).toBe(60);
  });

  it('forgets releases older than a window once many sessions were seen', () => {
    const b = bursts();
    for (let i = 0; i < 1_024; i += 1) b.release(`old-${i}`, 1);
    expect(b.size).toBe(1_024);
    now += 60;
    b.release('new', 1);
    expect(b.size).toBe(1);
    expect(b.delayMs('old-0', 1)).toBe(0);
    expect(b.delayMs('new', 1)).toBe(60);
  });
});
