// History's database pools survive Postgres terminating their connections (libs/persistence
// pg-pool.ts). The fault suite's Postgres fault (a fast shutdown: every backend gets 57P01) once
// made history exit with an unhandled 'error' event of a pg Client nobody listened on.
import pg from 'pg';
import { createGuardedPool } from '#persistence';
import { testServices, waitUntil } from '#test-support';

describe('guarded pg pool', () => {
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: (await testServices()).databaseUrl });
    await admin.connect();
  });
  afterAll(() => admin.end());

  /** The server-side termination a Postgres fast shutdown does to every backend. */
  async function terminate(pid: number): Promise<void> {
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  }

  it('reports a connection terminated while checked out between queries, and serves the next query', async () => {
    const errors: Error[] = [];
    const pool = createGuardedPool({
      connectionString: (await testServices()).databaseUrl,
      max: 2,
      onConnectionError: (error) => errors.push(error),
    });
    try {
      // Checked out with no query running: what a transaction between its statements looks like.
      const client = await pool.connect();
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await terminate(rows[0]!.pid);
      await waitUntil(() => errors.length > 0, 'the connection error reported', {
        timeoutMs: 5_000,
        intervalMs: 20,
      });
      expect((errors[0] as Error & { code?: string }).code).toBe('57P01');
      client.release(errors[0]);
      // The broken connection is gone; the pool opens a new one.
      const again = await pool.query<{ one: number }>('SELECT 1 AS one');
      expect(again.rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it('reports a connection terminated while idle in the pool', async () => {
    const errors: Error[] = [];
    const pool = createGuardedPool({
      connectionString: (await testServices()).databaseUrl,
      max: 1,
      onConnectionError: (error) => errors.push(error),
    });
    try {
      const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await terminate(rows[0]!.pid);
      await waitUntil(() => errors.length > 0, 'the connection error reported', {
        timeoutMs: 5_000,
        intervalMs: 20,
      });
      const again = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(again.rows[0]!.pid).not.toBe(rows[0]!.pid);
    } finally {
      await pool.end();
    }
  });
});
