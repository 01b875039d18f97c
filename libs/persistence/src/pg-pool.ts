import pg from 'pg';

export interface GuardedPoolOptions {
  connectionString: string;
  max: number;
  /** Told of every connection error no query is waiting on (a log line, not a crash). */
  onConnectionError: (error: Error) => void;
}

/**
 * A pg pool whose connections can never take the process down. pg emits an error that arrives
 * while no query is active as an 'error' event on the Client; the pool listens only while the
 * client is idle, `pool.query` only until its query returns, and a client released with an error
 * not at all. When Postgres stops (fast shutdown terminates every backend, 57P01) such an event is
 * routine, and without a listener Node throws it: history exited in the fault suite's Postgres
 * fault that way. A permanent listener on every client turns it into a log line; the pool
 * still drops the broken client and opens a new one on the next query.
 */
export function createGuardedPool(options: GuardedPoolOptions): pg.Pool {
  const pool = new pg.Pool({ connectionString: options.connectionString, max: options.max });
  pool.on('connect', (client) => client.on('error', options.onConnectionError));
  pool.on('error', options.onConnectionError);
  return pool;
}
