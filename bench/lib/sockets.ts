// Open TCP connections to a local port, counted from /proc/net/tcp and /proc/net/tcp6 (Linux):
// the server side's view of how many clients (SSE streams, waiting watches) are really connected.
import { readFileSync } from 'node:fs';

/** Established connections whose local port is `port` (the server's ends). */
export function establishedTo(port: number): number {
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let count = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is field 1, state field 3 (01 = ESTABLISHED).
      if (fields[1]?.endsWith(hexPort) && fields[3] === '01') count++;
    }
  }
  return count;
}
