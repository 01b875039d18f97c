// Where a database's sessions spend their time, sampled from `pg_stat_activity` (no server
// settings changed, nothing preloaded): every few ms, each backend connected to the run's own
// database counts once under its state — running a statement (by the statement's first words),
// waiting inside Postgres (wait event, e.g. `IO:WALSync` for a commit's flush, `Lock:…`), or idle
// in a transaction (Postgres waiting for the client, i.e. history's own time between statements).
import pg from 'pg';

export interface ActivitySummary {
  samples: number;
  interval_ms: number;
  /** Backend-samples by `state; wait event; statement`, most frequent first. */
  states: { key: string; count: number; share: number }[];
  /** Transactions committed in the database per second over the sampling (pg_stat_database). */
  commits_per_s: number;
}

function statement(query: string | null): string {
  const words = (query ?? '').replace(/\s+/g, ' ').trim().split(' ').slice(0, 6).join(' ');
  return words.length > 60 ? words.slice(0, 60) + '…' : words;
}

export class PgActivity {
  private readonly counts = new Map<string, number>();
  private samples = 0;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private commitsAtStart = 0;
  private startedAt = 0;

  private constructor(
    private readonly client: pg.Client,
    private readonly database: string,
    private readonly intervalMs: number,
  ) {}

  /** Connects (as the run's own database user) and starts sampling `database`. */
  static async start(databaseUrl: string, intervalMs = 20): Promise<PgActivity> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const database = new URL(databaseUrl).pathname.slice(1);
    const activity = new PgActivity(client, database, intervalMs);
    activity.commitsAtStart = await activity.commits();
    activity.startedAt = performance.now();
    activity.timer = setInterval(() => void activity.sample(), intervalMs);
    return activity;
  }

  private async commits(): Promise<number> {
    const result = await this.client.query<{ n: string }>(
      'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1',
      [this.database],
    );
    return Number(result.rows[0]?.n ?? 0);
  }

  private async sample(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const result = await this.client.query<{
        state: string | null;
        wait_event_type: string | null;
        wait_event: string | null;
        query: string | null;
      }>(
        `SELECT state, wait_event_type, wait_event, query FROM pg_stat_activity
          WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
        [this.database],
      );
      this.samples++;
      for (const row of result.rows) {
        if (row.state === 'idle') continue;
        const wait = row.wait_event_type ? `${row.wait_event_type}:${row.wait_event}` : 'on CPU / runnable';
        const key =
          row.state === 'active' ? `active; ${wait}; ${statement(row.query)}` : `${row.state}; ${wait}`;
        this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
      }
    } catch {
      // A missed sample only thins the statistics.
    } finally {
      this.busy = false;
    }
  }

  async stop(): Promise<ActivitySummary> {
    clearInterval(this.timer);
    while (this.busy) await new Promise((resolve) => setTimeout(resolve, 5));
    const seconds = (performance.now() - this.startedAt) / 1000;
    const commits = (await this.commits()) - this.commitsAtStart;
    await this.client.end();
    const total = [...this.counts.values()].reduce((sum, count) => sum + count, 0);
    return {
      samples: this.samples,
      interval_ms: this.intervalMs,
      states: [...this.counts.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([key, count]) => ({ key, count, share: total ? count / total : 0 })),
      commits_per_s: commits / seconds,
    };
  }
}
