// Gemini CLI answers `session/load` before it has streamed the loaded conversation back: its
// loadSession starts the replay (one session update per stored message) without waiting for it.
// So replayed updates can still arrive once the load is answered, and a prompt sent at once would
// have the last replayed reply streamed into its own. A session that was loaded therefore holds
// its first prompt until the replay has gone quiet, and treats every update until then as replay.

/** The replay after one `session/load`: quiet once no update came for `quietMs`, or after `maxMs`. */
export class LoadReplay {
  /** Resolves once the replay is over. */
  readonly quiet: Promise<void>;
  private done = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly deadline: NodeJS.Timeout;
  private resolve!: () => void;

  constructor(
    private readonly quietMs: number,
    maxMs: number,
  ) {
    this.quiet = new Promise<void>((resolve) => (this.resolve = resolve));
    this.deadline = setTimeout(() => this.finish(), maxMs);
    this.deadline.unref();
    this.arm();
  }

  /** True until the replay is over: an update now is replayed history, not turn output. */
  get replaying(): boolean {
    return !this.done;
  }

  /** A replayed update arrived: the replay goes on. */
  touch(): void {
    if (!this.done) this.arm();
  }

  /** Ends the replay at once (the session is closing). */
  finish(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    clearTimeout(this.deadline);
    this.resolve();
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.finish(), this.quietMs);
    this.timer.unref();
  }
}
