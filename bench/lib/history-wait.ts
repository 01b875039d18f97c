// Waits until history has stored a number of sessions (rows of `session_histories` in the run's
// own database), so SSE streams are opened on sessions that exist instead of hammering history
// with retried opens while it is still ingesting.
import pg from 'pg';

/** Resolves with the seconds waited; throws after `timeoutMs`. */
export async function waitForStoredSessions(
  databaseUrl: string,
  count: number,
  timeoutMs: number,
): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = performance.now();
  try {
    for (;;) {
      const result = await client.query<{ n: string }>('SELECT count(*) AS n FROM session_histories');
      const stored = Number(result.rows[0]?.n ?? 0);
      if (stored >= count) return (performance.now() - started) / 1000;
      if (performance.now() - started > timeoutMs) {
        throw new Error(`History stored ${stored} of ${count} sessions in ${timeoutMs / 1000} s.`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await client.end();
  }
}
