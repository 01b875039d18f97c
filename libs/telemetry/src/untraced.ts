// Which incoming HTTP requests the OpenTelemetry HTTP instrumentation leaves alone (no span, no
// `http.server.*` series). Probes and scrapes always; and whatever an app adds: the api adds the
// calls it is about to refuse for their caller's rate (apps/api/src/limits/early-refusal.ts),
// so a flood of them does not cost one instrumented request each. Those stay counted in the
// api's own `tether.http.request.duration` series, by status (429).
import type { IncomingMessage } from 'node:http';

/** Paths that are scraped or probed every few seconds: tracing them would only add noise. */
const UNTRACED_PATHS = new Set(['/metrics', '/healthz', '/readyz']);

let skipped: ((request: IncomingMessage) => boolean) | undefined;

/** One predicate per process (the api's); a later call replaces it. */
export function skipTracingWhen(predicate: (request: IncomingMessage) => boolean): void {
  skipped = predicate;
}

export function untraced(request: IncomingMessage): boolean {
  const url = request.url ?? '';
  const query = url.indexOf('?');
  if (UNTRACED_PATHS.has(query < 0 ? url : url.slice(0, query))) return true;
  return skipped?.(request) ?? false;
}
