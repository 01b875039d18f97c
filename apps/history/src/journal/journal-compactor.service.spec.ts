import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { HistoryConfig } from '../config.js';
import type { JournalCompactionRepository } from './journal-compaction.repository.js';
import { JournalCompactor } from './journal-compactor.service.js';

const INTERVAL_MS = 1_000;

function compactorWith(candidates: () => Promise<string[]>) {
  const config = {
    journalCompaction: { intervalMs: INTERVAL_MS, policy: { minTailRows: 512, retainTailMs: 7_200_000 } },
  } as HistoryConfig;
  const repository = {
    candidates: jest.fn(candidates),
    compact: jest.fn(() => Promise.resolve({ kind: 'kept' as const })),
  };
  return new JournalCompactor(config, repository as unknown as JournalCompactionRepository);
}

describe('JournalCompactor', () => {
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('logs one warning per failing streak', async () => {
    jest.useFakeTimers();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    // fail, fail, fail, succeed, fail, fail
    const outcomes = [false, false, false, true, false, false];
    const compactor = compactorWith(() =>
      outcomes.shift() === false ? Promise.reject(new Error('database down')) : Promise.resolve([]),
    );
    compactor.onApplicationBootstrap();
    for (let i = 0; i < 6; i += 1) await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    await compactor.onModuleDestroy();
    expect(warn).toHaveBeenCalledTimes(2);
    expect(warn).toHaveBeenCalledWith('Journal compaction failed: database down');
  });

  it('stops on shutdown: no run after it', async () => {
    jest.useFakeTimers();
    const candidates = jest.fn(() => Promise.resolve([] as string[]));
    const compactor = compactorWith(candidates);
    compactor.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(candidates).toHaveBeenCalledTimes(1);
    await compactor.onModuleDestroy();
    await jest.advanceTimersByTimeAsync(5 * INTERVAL_MS);
    expect(candidates).toHaveBeenCalledTimes(1);
  });
});
