// The Prometheus series each app must export after one scripted turn (docs/observability.md),
// and the labels that must appear on them. The dashboards test checks queries against the union.
export const EXPECTED_SERIES = {
  api: [
    'tether_http_request_duration_bucket',
    'tether_http_request_duration_count',
    'tether_http_request_duration_sum',
    'tether_api_request_service_duration_bucket',
    'tether_nats_request_duration_bucket',
    'tether_sse_streams',
  ],
  router: [
    'tether_nats_request_duration_bucket',
    'tether_nats_request_duration_count',
    'tether_leases_active',
    'tether_watchers_active',
    'tether_connectors_online',
  ],
  edge: [
    'tether_turn_dispatch_duration_bucket',
    'tether_turn_first_reply_duration_bucket',
    'tether_turn_finished_duration_bucket',
    'tether_turn_finished_duration_count',
    'tether_sessions_live',
    'tether_nats_request_duration_bucket',
  ],
  history: [
    'tether_history_write_duration_bucket',
    'tether_history_write_duration_count',
    'tether_jetstream_consumer_lag',
  ],
} as const;

export type AppName = keyof typeof EXPECTED_SERIES;

/** Every series name the services export (histograms as their three series). */
export function exportedSeries(): Set<string> {
  const names = new Set<string>();
  for (const list of Object.values(EXPECTED_SERIES)) {
    for (const name of list) {
      names.add(name);
      const family = name.replace(/_(bucket|sum|count)$/, '');
      if (family !== name) for (const suffix of ['_bucket', '_sum', '_count']) names.add(family + suffix);
    }
  }
  // Prometheus' own series for every scrape target.
  names.add('up');
  return names;
}
