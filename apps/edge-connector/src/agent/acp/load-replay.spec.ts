import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { LoadReplay } from './load-replay.js';

describe('LoadReplay', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  const over = async (replay: LoadReplay): Promise<boolean> => {
    let done = false;
    void replay.quiet.then(() => (done = true));
    await Promise.resolve();
    return done;
  };

  it('is over once no update came for the quiet time', async () => {
    const replay = new LoadReplay(250, 5_000);
    jest.advanceTimersByTime(249);
    expect(replay.replaying).toBe(true);
    expect(await over(replay)).toBe(false);
    jest.advanceTimersByTime(1);
    expect(replay.replaying).toBe(false);
    expect(await over(replay)).toBe(true);
  });

  it('goes on while updates keep coming, but never past the bound', async () => {
    const replay = new LoadReplay(250, 1_000);
    for (let round = 0; round < 4; round += 1) {
      jest.advanceTimersByTime(200);
      replay.touch();
    }
    // 800 ms in, the last update 0 ms ago: still replaying; the bound ends it at 1,000 ms.
    expect(replay.replaying).toBe(true);
    jest.advanceTimersByTime(199);
    expect(replay.replaying).toBe(true);
    jest.advanceTimersByTime(1);
    expect(replay.replaying).toBe(false);
    expect(await over(replay)).toBe(true);
  });

  it('ends at once when finished, and a late update does not revive it', async () => {
    const replay = new LoadReplay(250, 5_000);
    replay.finish();
    replay.touch();
    expect(replay.replaying).toBe(false);
    expect(await over(replay)).toBe(true);
  });
});
