// The shipped Prometheus configuration is valid and its alerts are tested: `promtool check
// config`, `promtool check rules`, and `promtool test rules` on alerts.test.yml, which must give
// every alert a series set where it fires and one where it stays quiet. Every alert links a
// runbook that exists in docs/operations.md. promtool comes from Debian's `prometheus` package
// (.ci/run installs it when missing).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROMETHEUS_DIR, rules } from './shipped-queries.js';

function promtool(...args: string[]): string {
  const run = spawnSync('promtool', args, { cwd: PROMETHEUS_DIR, encoding: 'utf8' });
  if (run.error)
    throw new Error(`promtool is not installed (apt-get install prometheus): ${run.error.message}`);
  const output = `${run.stdout}${run.stderr}`;
  if (run.status !== 0) throw new Error(`promtool ${args.join(' ')} failed:\n${output}`);
  return output;
}

test('promtool check config accepts prometheus.yml, rule file included', () => {
  const output = promtool('check', 'config', 'prometheus.yml');
  expect(output).toMatch(/SUCCESS/);
  expect(output).toMatch(/alerts\.yml/);
});

test('promtool check rules accepts alerts.yml', () => {
  expect(promtool('check', 'rules', 'alerts.yml')).toMatch(/SUCCESS: \d+ rules found/);
});

test('promtool test rules passes, and every alert has a firing and a quiet case', () => {
  expect(promtool('test', 'rules', 'alerts.test.yml')).toMatch(/SUCCESS/);
  const suite = parse(readFileSync(join(PROMETHEUS_DIR, 'alerts.test.yml'), 'utf8')) as {
    tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
  };
  const firing = new Set<string>();
  const quiet = new Set<string>();
  for (const test of suite.tests) {
    for (const check of test.alert_rule_test ?? []) {
      ((check.exp_alerts ?? []).length > 0 ? firing : quiet).add(check.alertname);
    }
  }
  const alerts = rules().flatMap((rule) => (rule.alert ? [rule.alert] : []));
  expect(alerts.length).toBeGreaterThanOrEqual(15);
  expect(alerts.filter((name) => !firing.has(name))).toEqual([]);
  expect(alerts.filter((name) => !quiet.has(name))).toEqual([]);
});

test('every service has a down and an absent alert, and every alert a runbook section', () => {
  const all = rules();
  for (const job of ['tether-api', 'tether-session-router', 'tether-history', 'tether-edge-connector']) {
    expect(all.some((rule) => rule.alert && rule.expr === `up{job="${job}"} == 0`)).toBe(true);
    expect(all.some((rule) => rule.alert && rule.expr === `absent(up{job="${job}"} == 1)`)).toBe(true);
  }
  // GitHub's heading anchors: lower case, spaces to dashes, punctuation dropped.
  const operations = readFileSync(join(process.cwd(), 'docs/operations.md'), 'utf8');
  const anchors = new Set(
    [...operations.matchAll(/^#{2,4} (.+)$/gm)].map((heading) =>
      heading[1]!
        .trim()
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, '')
        .replace(/ /g, '-'),
    ),
  );
  for (const rule of all.filter((candidate) => candidate.alert)) {
    const link = rule.annotations?.runbook_url ?? '';
    expect(link).toMatch(/^docs\/operations\.md#/);
    expect([rule.alert, anchors.has(link.split('#')[1]!)]).toEqual([rule.alert, true]);
  }
});
