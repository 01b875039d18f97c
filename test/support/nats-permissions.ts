// Helpers for suites that check what a NATS identity may do: connect with a creds file (and the
// identity's own inbox), and observe the server's permission refusals.
import { readFileSync } from 'node:fs';
import { credsAuthenticator, errors, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';

export interface WatchedConnection {
  nc: NatsConnection;
  /** Permission refusals the server sent this connection, as `publish <subject>` / `subscription <subject>`. */
  refusals: string[];
  /** Other errors and the disconnects the server caused. */
  events: string[];
}

export async function connectAs(
  url: string,
  credsPath: string | undefined,
  inboxPrefix: string,
  name: string,
): Promise<WatchedConnection> {
  const nc = await connect({
    servers: url,
    name,
    inboxPrefix,
    noAsyncTraces: true,
    // A refused reconnect should end the test's connection, not loop.
    maxReconnectAttempts: 3,
    reconnectTimeWait: 200,
    ...(credsPath && { authenticator: credsAuthenticator(new Uint8Array(readFileSync(credsPath))) }),
  });
  const watched: WatchedConnection = { nc, refusals: [], events: [] };
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'error' && status.error instanceof errors.PermissionViolationError) {
        watched.refusals.push(`${status.error.operation} ${status.error.subject}`);
      } else {
        watched.events.push(status.type === 'error' ? `error ${status.error.message}` : status.type);
      }
    }
  })();
  return watched;
}

/** Polls `check` until it holds or the time is up; returns whether it held. */
export async function within(ms: number, check: () => boolean): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((done) => setTimeout(done, 50));
  }
  return check();
}
