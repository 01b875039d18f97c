// The Prometheus series each app must export after one scripted turn (docs/observability.md),
// with or without tracing. Durations are in seconds with the unit in the name; the standard
// OpenTelemetry series (HTTP, database, messaging) and the runtime series are always there.
export const EXPECTED_SERIES = {
  api: [
    'tether_http_request_duration_seconds_bucket',
    'tether_http_request_duration_seconds_count',
    'tether_http_request_duration_seconds_sum',
    'tether_api_request_service_duration_seconds_bucket',
    'tether_nats_request_duration_seconds_bucket',
    'tether_sse_streams',
    'http_server_request_duration_seconds_bucket',
    'messaging_client_operation_duration_seconds_bucket',
    'messaging_client_sent_messages_total',
  ],
  router: [
    'tether_nats_request_duration_seconds_bucket',
    'tether_nats_request_duration_seconds_count',
    'tether_leases_active',
    'tether_watchers_active',
    'tether_connectors_online',
    'tether_submissions_settled_total',
    'messaging_process_duration_seconds_bucket',
    'messaging_client_consumed_messages_total',
    'messaging_client_operation_duration_seconds_bucket',
  ],
  edge: [
    'tether_turn_dispatch_duration_seconds_bucket',
    'tether_turn_first_reply_duration_seconds_bucket',
    'tether_turn_finished_duration_seconds_bucket',
    'tether_turn_finished_duration_seconds_count',
    'tether_sessions_live',
    'tether_nats_request_duration_seconds_bucket',
    'messaging_process_duration_seconds_bucket',
    'messaging_client_operation_duration_seconds_bucket',
  ],
  history: [
    'tether_history_write_duration_seconds_bucket',
    'tether_history_write_duration_seconds_count',
    'tether_jetstream_consumer_lag',
    'db_client_operation_duration_seconds_bucket',
    'messaging_process_duration_seconds_bucket',
  ],
} as const;

/** Process and runtime series every app exports (instrumentation-runtime-node and our own). */
export const RUNTIME_SERIES = [
  'process_cpu_time_seconds_total',
  'process_memory_usage_bytes',
  'nodejs_eventloop_delay_p99_seconds',
  'nodejs_eventloop_utilization',
  'v8js_memory_heap_used_bytes',
  'target_info',
] as const;

export type AppName = keyof typeof EXPECTED_SERIES;

/** Every series name the services export (histograms as their three series). */
export function exportedSeries(): Set<string> {
  const names = new Set<string>(RUNTIME_SERIES);
  // Runtime series exported once there is something to report (a GC, a handle).
  for (const name of ['v8js_gc_duration_seconds_bucket', 'nodejs_eventloop_time_seconds_total'])
    names.add(name);
  for (const list of Object.values(EXPECTED_SERIES)) {
    for (const name of list) names.add(name);
  }
  for (const name of [...names]) {
    const family = name.replace(/_(bucket|sum|count)$/, '');
    if (family !== name) for (const suffix of ['_bucket', '_sum', '_count']) names.add(family + suffix);
  }
  // Prometheus' own series for every scrape target.
  names.add('up');
  return names;
}
