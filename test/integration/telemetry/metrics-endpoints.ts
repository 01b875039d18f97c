// Where each app serves /metrics in a running stack: the one place tests look it up. Every app
// serves it on its ops port (TETHER_METRICS_PORT=0 in tests: an ephemeral port each service
// announces in its log), never on the api's public port.
import type { Stack } from '../../../scripts/stack/launcher.js';
import type { AppName } from './expected-series.js';
import { parseMetrics } from './prometheus-text.js';

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
    api: announcedOpsUrl(stack, 'api'),
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

/**
 * The value an app's /metrics gives the first sample of family `name` whose labels include
 * `labels` (0 when there is none yet: a counter appears with its first increment).
 */
export async function metricValue(
  stack: Stack,
  app: AppName,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const response = await fetch(`${metricsEndpoints(stack)[app]}/metrics`);
  const family = parseMetrics(await response.text()).families.find((candidate) => candidate.name === name);
  const sample = family?.metrics.find((metric) =>
    Object.entries(labels).every(([key, value]) => 'labels' in metric && metric.labels?.[key] === value),
  );
  return sample && 'value' in sample ? Number(sample.value) : 0;
}
