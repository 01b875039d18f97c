#!/usr/bin/env node
// `npm run k8s:rules`: writes deploy/k8s/overlays/production/prometheusrule.yaml, the Prometheus
// Operator's form of deploy/observability/prometheus/alerts.yml, so both deployments alert on the
// one rule file. `--check` exits 1 when the generated file is out of date (the k8s test runs it).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { parse, stringify } from 'yaml';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = join(ROOT, 'deploy/observability/prometheus/alerts.yml');
const TARGET = join(ROOT, 'deploy/k8s/overlays/production/prometheusrule.yaml');

/** The PrometheusRule text for the rule file's text, formatted as the repository formats YAML. */
export async function renderPrometheusRule(alertsText) {
  const rules = parse(alertsText);
  if (!rules || !Array.isArray(rules.groups)) throw new Error(`${SOURCE} has no rule groups.`);
  const resource = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'tether', labels: { release: 'prometheus' } },
    spec: { groups: rules.groups },
  };
  const text =
    '# Generated from deploy/observability/prometheus/alerts.yml by `npm run k8s:rules`; edit that\n' +
    '# file and regenerate. Runbooks: docs/operations.md, "Alerts".\n' +
    stringify(resource, { lineWidth: 0 });
  return format(text, { ...(await resolveConfig(TARGET)), parser: 'yaml', filepath: TARGET });
}

async function main() {
  const text = await renderPrometheusRule(readFileSync(SOURCE, 'utf8'));
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(TARGET, 'utf8');
    } catch {
      // Missing counts as out of date.
    }
    if (current !== text) {
      process.stderr.write(`${TARGET} is out of date: run \`npm run k8s:rules\`.\n`);
      process.exit(1);
    }
    return;
  }
  writeFileSync(TARGET, text);
  process.stdout.write(`Wrote ${TARGET}.\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
