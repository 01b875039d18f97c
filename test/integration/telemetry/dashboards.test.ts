// Every query in the shipped Grafana dashboards and Prometheus rules names only series the
// services export (the list the e2e suites check against live /metrics) or a recording rule.
// test/e2e/prometheus.test.ts evaluates the same queries against a real Prometheus.
import { exportedSeries } from './expected-series.js';
import {
  dashboardQueries,
  dashboardVariables,
  recordedNames,
  ruleQueries,
  seriesIn,
} from './shipped-queries.js';

test('the expression reader finds series and skips functions, labels and numbers', () => {
  expect(
    seriesIn('histogram_quantile(0.99, sum by (le, subject) (rate(tether_x_bucket{a="b"}[5m]))) > 1e-9'),
  ).toEqual(['tether_x_bucket']);
  expect(seriesIn('(sum(rate(tether_b_count[5m])) or vector(0)) / clamp_min(tether:r:rate5m, 1)')).toEqual([
    'tether_b_count',
    'tether:r:rate5m',
  ]);
  expect(seriesIn('absent(up{job="x"} == 1) or on() max(tether_a) < 1')).toEqual(['up', 'tether_a']);
});

test('every dashboard and rule query names only exported series or recorded ones', () => {
  const known = new Set([...exportedSeries(), ...recordedNames()]);
  const queries = [...dashboardQueries(), ...ruleQueries()];
  expect(dashboardQueries().length).toBeGreaterThanOrEqual(25);
  const unknown: string[] = [];
  for (const query of queries) {
    const names = seriesIn(query.expr);
    expect([query.where, names.length > 0]).toEqual([query.where, true]);
    for (const name of names) if (!known.has(name)) unknown.push(`${query.where}: ${name}`);
  }
  expect(unknown).toEqual([]);
});

test('the dashboard filters by namespace, service and instance, and opens with a health row', () => {
  expect(dashboardVariables().map((variable) => variable.name)).toEqual(['namespace', 'service', 'instance']);
  const panelQueries = dashboardQueries().filter((query) => !query.expr.startsWith('tether:'));
  for (const query of panelQueries) {
    expect([query.where, query.expr]).toEqual([
      query.where,
      expect.stringContaining('namespace=~"$namespace", job=~"$service", instance=~"$instance"'),
    ]);
  }
  expect(dashboardQueries()[0]!.expr).toMatch(/^sum by \(job\) \(up\{/);
});
