// One background job on a timer, the way every service runs its own (the journal compactor in
// history, the lease reaper and the submission sweep in the router): rounds never overlap on one
// replica (the next is timed from the end of the last, so a round that outlasts the interval
// delays the next instead of running beside it), each round is a trace of its own
// (traceBackground), and stop() waits for the round under way. What a round does with its own
// failures (log once per streak, count them) stays the job's: a round that throws anyway is only
// logged here, so a bug in it cannot end the timer or the process.
import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { traceBackground } from './background.js';

export interface PeriodicTaskOptions {
  /** The trace name of a round, e.g. `router.lease-reaper`. */
  name: string;
  intervalMs: number;
  /** Delay before the first round (default: one interval). */
  firstDelayMs?: number;
}

/**
 * A service that runs beside the app: it starts once every module is ready
 * (`onApplicationBootstrap`) and stops, draining what it has in hand, before the app closes
 * (`onModuleDestroy`).
 */
export type BackgroundService = OnApplicationBootstrap & OnModuleDestroy;

export class PeriodicTask {
  private readonly log = new Logger(PeriodicTask.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly options: PeriodicTaskOptions,
    private readonly round: () => Promise<void>,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(this.options.firstDelayMs ?? this.options.intervalMs);
  }

  /** No new round starts; resolves once the one under way (if any) has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // Its own trace, not the one of whatever request happened to be current when it was set.
      this.running = traceBackground(this.options.name, this.round)
        .catch((error: unknown) =>
          this.log.error(`${this.options.name} round failed: ${(error as Error).message}`),
        )
        .finally(() => {
          this.running = undefined;
          this.schedule(this.options.intervalMs);
        });
    }, delayMs);
    // A timer alone never keeps a process alive: shutdown is the app's to decide.
    this.timer.unref();
  }
}

/**
 * A service whose work is one PeriodicTask: the timer starts once the app is up and stops, the
 * round under way finished, when the module is destroyed. A round reads `stopped` to end early.
 */
export abstract class PeriodicWorker implements BackgroundService {
  protected stopped = false;
  private task: PeriodicTask | undefined;

  /** The timer's settings, or undefined to leave it off (an interval of 0 in the configuration). */
  protected abstract schedule(): PeriodicTaskOptions | undefined;
  /** One round; its own failures are its to log and count. */
  protected abstract tick(): Promise<void>;

  onApplicationBootstrap(): void {
    const options = this.schedule();
    if (!options) return;
    this.task = new PeriodicTask(options, () => this.tick());
    this.task.start();
  }

  /** No new round starts; resolves once the one under way, and what it left running, finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.task?.stop();
    await this.drain();
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }

  /** Work a round started and left running that a stop must wait for (none by default). */
  protected drain(): Promise<void> {
    return Promise.resolve();
  }
}
