#!/usr/bin/env node
// The images' HEALTHCHECK: /healthz on the ops port of this container (TETHER_METRICS_PORT).
// Exit 0 when it answers 200 within the timeout, 1 otherwise.
const TIMEOUT_MS = 3_000;
const port = Number(process.env.TETHER_METRICS_PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error('healthcheck: TETHER_METRICS_PORT names no port.');
  process.exit(1);
}
try {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, {
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  process.exit(response.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
