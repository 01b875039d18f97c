import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { PeriodicTask, PeriodicWorker, type PeriodicTaskOptions } from './periodic-task.js';

const tick = (ms: number) => jest.advanceTimersByTimeAsync(ms);

describe('PeriodicTask', () => {
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('runs after the first delay, then every interval timed from the end of a round', async () => {
    jest.useFakeTimers();
    const starts: number[] = [];
    const task = new PeriodicTask({ name: 'test.rounds', intervalMs: 100, firstDelayMs: 10 }, async () => {
      starts.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, 250));
    });
    const origin = Date.now();
    task.start();
    await tick(10 + 250 + 100 + 250 + 100 + 1);
    // A 250 ms round never overlaps the next: 10, then 10 + 250 + 100, then that + 350.
    expect(starts.map((at) => at - origin)).toEqual([10, 360, 710]);
    const stopped = task.stop();
    await tick(250);
    await stopped;
  });

  it('keeps going after a round throws, and says so', async () => {
    jest.useFakeTimers();
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    let rounds = 0;
    const task = new PeriodicTask({ name: 'test.failing', intervalMs: 50 }, () => {
      rounds += 1;
      return rounds === 1 ? Promise.reject(new Error('boom')) : Promise.resolve();
    });
    task.start();
    await tick(50 + 50 + 1);
    expect(rounds).toBe(2);
    expect(errors).toHaveBeenCalledWith('test.failing round failed: boom');
    await task.stop();
  });

  it('stop() waits for the round under way and starts no other', async () => {
    jest.useFakeTimers();
    let finished = 0;
    let rounds = 0;
    const task = new PeriodicTask({ name: 'test.stop', intervalMs: 20 }, async () => {
      rounds += 1;
      await new Promise((resolve) => setTimeout(resolve, 100));
      finished += 1;
    });
    task.start();
    await tick(25);
    const stopped = task.stop();
    await tick(100);
    await stopped;
    expect(finished).toBe(1);
    await tick(500);
    expect(rounds).toBe(1);
  });
});

/** A worker whose rounds and drain the test sees. */
class CountingWorker extends PeriodicWorker {
  rounds = 0;
  drained = false;
  constructor(private readonly options: PeriodicTaskOptions | undefined) {
    super();
  }
  protected schedule(): PeriodicTaskOptions | undefined {
    return this.options;
  }
  protected tick(): Promise<void> {
    this.rounds += 1;
    return Promise.resolve();
  }
  protected override async drain(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 20));
    this.drained = true;
  }
  get isStopped(): boolean {
    return this.stopped;
  }
}

describe('PeriodicWorker', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('starts its rounds with the app and, on destroy, stops them and waits for its drain', async () => {
    jest.useFakeTimers();
    const worker = new CountingWorker({ name: 'test.worker', intervalMs: 100 });
    worker.onApplicationBootstrap();
    await tick(250);
    expect(worker.rounds).toBe(2);
    const destroyed = worker.onModuleDestroy();
    await tick(20);
    await destroyed;
    expect(worker.isStopped).toBe(true);
    expect(worker.drained).toBe(true);
    await tick(500);
    expect(worker.rounds).toBe(2);
  });

  it('runs nothing when its schedule is off', async () => {
    jest.useFakeTimers();
    const worker = new CountingWorker(undefined);
    worker.onApplicationBootstrap();
    await tick(1_000);
    expect(worker.rounds).toBe(0);
    const stopped = worker.stop();
    await tick(20);
    await stopped;
  });
});
