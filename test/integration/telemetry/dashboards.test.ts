// Every query in the shipped Grafana dashboards and Prometheus alert rules names only series the
// services export (the list the e2e suite checks against live /metrics after a turn).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportedSeries } from './expected-series.js';

const ROOT = join(process.cwd(), 'deploy/observability');

/** PromQL words that are not series names. */
const PROMQL_WORDS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'rate',
  'irate',
  'increase',
  'histogram_quantile',
  'clamp_min',
  'clamp_max',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'le',
  'abs',
  'absent',
  'time',
  'vector',
  'scalar',
]);

/** The series names a PromQL expression reads. */
export function seriesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // ranges
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ''); // grouping labels
  const names: string[] = [];
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = match[0];
    const after = stripped.slice((match.index ?? 0) + word.length).trimStart();
    if (PROMQL_WORDS.has(word) || after.startsWith('(') || /^[0-9]/.test(word)) continue;
    if (/^\d*e\d+$/i.test(word) || word === 'e') continue;
    names.push(word);
  }
  return names;
}

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

function dashboardQueries(): { where: string; expr: string }[] {
  const dir = join(ROOT, 'grafana/dashboards');
  const queries: { where: string; expr: string }[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json'))) {
    const dashboard = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { panels?: Panel[] };
    const walk = (panels: Panel[] | undefined) => {
      for (const panel of panels ?? []) {
        for (const target of panel.targets ?? []) {
          if (target.expr) queries.push({ where: `${file}: ${panel.title ?? '?'}`, expr: target.expr });
        }
        walk(panel.panels);
      }
    };
    walk(dashboard.panels);
  }
  return queries;
}

function alertQueries(): { where: string; expr: string }[] {
  const text = readFileSync(join(ROOT, 'prometheus/alerts.yml'), 'utf8');
  const queries: { where: string; expr: string }[] = [];
  let alert = '?';
  for (const line of text.split('\n')) {
    const name = /^\s*- alert:\s*(\S+)/.exec(line);
    if (name) alert = name[1]!;
    const expr = /^\s*expr:\s*(.+)$/.exec(line);
    if (expr) queries.push({ where: `alerts.yml: ${alert}`, expr: expr[1]!.trim() });
  }
  return queries;
}

test('the expression reader finds series and skips functions, labels and numbers', () => {
  expect(
    seriesIn('histogram_quantile(0.99, sum by (le, subject) (rate(tether_x_bucket{a="b"}[5m]))) > 1e-9'),
  ).toEqual(['tether_x_bucket']);
  expect(seriesIn('max(tether_a) / clamp_min(sum(rate(tether_b_count[5m])), 1)')).toEqual([
    'tether_a',
    'tether_b_count',
  ]);
});

test('every dashboard and alert query names only exported series', () => {
  const exported = exportedSeries();
  const queries = [...dashboardQueries(), ...alertQueries()];
  // Service latency, turn timing, sessions, leases, consumer lag, errors; four alert kinds.
  expect(dashboardQueries().length).toBeGreaterThanOrEqual(10);
  expect(
    alertQueries()
      .map((query) => query.where)
      .join(' '),
  ).toMatch(/EdgeOffline.*ConsumerLag.*ErrorRate.*P99/s);
  const unknown: string[] = [];
  for (const query of queries) {
    const names = seriesIn(query.expr);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) if (!exported.has(name)) unknown.push(`${query.where}: ${name}`);
  }
  expect(unknown).toEqual([]);
});
