import { PrometheusSerializer, type PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import type { MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';

/** The pull reader behind every `/metrics`; set by the SDK bootstrap (sdk.ts), absent when off. */
let reader: PrometheusExporter | undefined;
const serializer = new PrometheusSerializer();

export function setMetricsReader(value: PrometheusExporter | undefined): void {
  reader = value;
}

/**
 * Prometheus suffixes for OpenTelemetry units, as the OpenTelemetry → Prometheus compatibility
 * rules name them: a duration in `s` is `…_seconds`, a size in `By` is `…_bytes`. Annotations in
 * braces (`{message}`) and dimensionless `1` add nothing. The exporter itself keeps the bare
 * name, which would leave the unit out of every series name.
 */
const UNIT_SUFFIX: Record<string, string> = {
  s: 'seconds',
  ms: 'milliseconds',
  By: 'bytes',
};

/** `name` with its unit as a suffix (once), e.g. `http.server.request.duration` → `…_seconds`. */
export function prometheusName(name: string, unit: string): string {
  const suffix = UNIT_SUFFIX[unit];
  if (!suffix) return name;
  return name.endsWith(`_${suffix}`) || name.endsWith(`.${suffix}`) ? name : `${name}_${suffix}`;
}

function withUnitSuffix(metric: MetricData): MetricData {
  const { name, unit } = metric.descriptor;
  const renamed = prometheusName(name, unit);
  return renamed === name
    ? metric
    : ({ ...metric, descriptor: { ...metric.descriptor, name: renamed } } as MetricData);
}

/** The process's metrics in Prometheus text format (empty when telemetry is off). */
export async function renderMetrics(): Promise<string> {
  if (!reader) return '';
  const { resourceMetrics } = await reader.collect();
  const named: ResourceMetrics = {
    ...resourceMetrics,
    scopeMetrics: resourceMetrics.scopeMetrics.map((scope) => ({
      ...scope,
      metrics: scope.metrics.map(withUnitSuffix),
    })),
  };
  return serializer.serialize(named);
}

/** The content type of `renderMetrics()`. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
