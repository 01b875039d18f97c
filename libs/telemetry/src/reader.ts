import { PrometheusSerializer, type PrometheusExporter } from '@opentelemetry/exporter-prometheus';

/** The pull reader behind every `/metrics`; set by the SDK bootstrap (sdk.ts), absent when off. */
let reader: PrometheusExporter | undefined;
const serializer = new PrometheusSerializer();

export function setMetricsReader(value: PrometheusExporter | undefined): void {
  reader = value;
}

/** The process's metrics in Prometheus text format (empty when telemetry is off). */
export async function renderMetrics(): Promise<string> {
  if (!reader) return '';
  const { resourceMetrics } = await reader.collect();
  return serializer.serialize(resourceMetrics);
}

/** The content type of `renderMetrics()`. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
