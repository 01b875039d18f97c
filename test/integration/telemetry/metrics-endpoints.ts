// Where each app serves /metrics in a running stack: the one place tests look it up. Every app
// that has an ops port (TETHER_METRICS_PORT=0 in tests: an ephemeral port each service announces
// in its log) serves it there; an api without one serves it on its HTTP port.
import type { Stack } from '../../../scripts/stack/launcher.js';
import type { AppName } from './expected-series.js';

/** The ops base URL a service announced in its log (`Ops endpoints of <service> at <url>`). */
export function announcedOpsUrl(stack: Stack, service: string): string {
  const url = maybeOpsUrl(stack, service);
  if (!url) throw new Error(`${service} announced no ops endpoints.\n${stack.output()}`);
  return url;
}

function maybeOpsUrl(stack: Stack, service: string): string | undefined {
  return new RegExp(`Ops endpoints of ${service} at (http://[0-9.]+:[0-9]+)`).exec(stack.output())?.[1];
}

/** The base URL whose `/metrics`, `/healthz` and `/readyz` each app serves. */
export function metricsEndpoints(stack: Stack): Record<AppName, string> {
  return {
    api: maybeOpsUrl(stack, 'api') ?? stack.apiUrl,
    router: announcedOpsUrl(stack, 'session-router'),
    edge: announcedOpsUrl(stack, 'edge-connector'),
    history: announcedOpsUrl(stack, 'history'),
  };
}

/** The Prometheus job of each app (deploy/observability/prometheus/prometheus.yml). */
export const PROMETHEUS_JOB: Record<AppName, string> = {
  api: 'tether-api',
  router: 'tether-session-router',
  edge: 'tether-edge-connector',
  history: 'tether-history',
};
