import { Inject, Injectable, Logger } from '@nestjs/common';
import { PeriodicWorker, type PeriodicTaskOptions } from '#telemetry';
import type { HistoryConfig } from '../config.js';
import { HISTORY_CONFIG } from '../common/tokens.js';
import type { CompactionPolicy } from './compaction-policy.js';
import { JournalCompactionRepository } from './journal-compaction.repository.js';

/** Sessions read per candidate query; a run walks all of them in pages of this size. */
const CANDIDATES_PAGE = 100;

export interface CompactionRun {
  compacted: number;
  /** Sessions another writer held: they are tried again on the next run. */
  busy: number;
  rowsDeleted: number;
}

/**
 * Runs journal compaction (reference §1.10) periodically on every history replica. Each session
 * is compacted in its own transaction under a SKIP LOCKED row lock, so replicas never wait on
 * each other or on the journal consumer, and a session one of them holds is simply skipped.
 * A failing run logs one warning per failing streak (the first failure, then nothing until a run
 * succeeds again), so a database outage does not flood the log.
 */
@Injectable()
export class JournalCompactor extends PeriodicWorker {
  private readonly log = new Logger(JournalCompactor.name);
  private running: Promise<CompactionRun> | undefined;
  private failing = false;

  constructor(
    @Inject(HISTORY_CONFIG) private readonly config: HistoryConfig,
    private readonly compaction: JournalCompactionRepository,
  ) {
    super();
  }

  protected schedule(): PeriodicTaskOptions | undefined {
    const { intervalMs } = this.config.journalCompaction;
    return intervalMs === 0 ? undefined : { name: 'history.journal-compaction', intervalMs };
  }

  /** A stop waits for a run in progress to finish its current session. */
  protected override async drain(): Promise<void> {
    await this.running?.catch(() => undefined);
  }

  /**
   * One pass over every candidate session. `now` and `policy` default to the clock and the
   * configured policy; tests pass their own. A pass already under way finishes first: passes
   * never overlap on one replica.
   */
  async runOnce(now?: number, policy?: CompactionPolicy): Promise<CompactionRun> {
    while (this.running) await this.running.catch(() => undefined);
    const run = this.pass(now ?? Date.now(), policy ?? this.config.journalCompaction.policy).finally(() => {
      this.running = undefined;
    });
    this.running = run;
    return run;
  }

  protected async tick(): Promise<void> {
    if (this.stopped || this.running) return;
    try {
      const run = await this.runOnce();
      if (this.failing) this.log.log('Journal compaction works again.');
      this.failing = false;
      if (run.compacted > 0) {
        this.log.log(`Compacted ${run.compacted} session journals (${run.rowsDeleted} rows).`);
      }
    } catch (error) {
      if (!this.failing) this.log.warn(`Journal compaction failed: ${(error as Error).message}`);
      this.failing = true;
    }
  }

  private async pass(now: number, policy: CompactionPolicy): Promise<CompactionRun> {
    const run: CompactionRun = { compacted: 0, busy: 0, rowsDeleted: 0 };
    const trigger = 2 * policy.minTailRows;
    let after = '';
    for (;;) {
      const sessions = await this.compaction.candidates(after, trigger, CANDIDATES_PAGE);
      for (const sessionId of sessions) {
        if (this.stopped) return run;
        const outcome = await this.compaction.compact(sessionId, policy, now);
        if (outcome.kind === 'busy') run.busy += 1;
        if (outcome.kind === 'compacted') {
          run.compacted += 1;
          run.rowsDeleted += outcome.deleted;
        }
      }
      if (sessions.length < CANDIDATES_PAGE) return run;
      after = sessions[sessions.length - 1]!;
    }
  }
}
