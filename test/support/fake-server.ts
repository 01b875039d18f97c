// The plumbing the scripted model servers share (fake-provider, fake-anthropic, fake-gemini):
// listening on loopback, waiting for a number of requests, and stopping with every connection.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on 127.0.0.1 (`port` 0: any free one); resolves with the bound port. */
export async function listenLocal(server: Server, port = 0): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * Resolves once `requests` holds `count` entries; `waiters` is the set the server calls after
 * recording each request. Rejects after `timeoutMs`, naming `who` and the count seen.
 */
export function waitForCount(
  requests: { length: number },
  waiters: Set<() => void>,
  count: number,
  timeoutMs: number,
  who: string,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (requests.length < count) return;
      clearTimeout(timer);
      waiters.delete(check);
      resolve();
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`${who} saw ${requests.length} of ${count} requests`));
    }, timeoutMs);
    waiters.add(check);
    check();
  });
}

/** Stops the server, cutting the connections still open (a hung stream, a keep-alive). */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
