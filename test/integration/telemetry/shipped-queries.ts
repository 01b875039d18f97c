// Every PromQL expression Tether ships: the Grafana dashboards' panel targets and template
// variables, and the Prometheus recording and alert rules. The static test (dashboards.test.ts)
// and the live one (test/e2e/prometheus.test.ts) both read them from here.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export const OBSERVABILITY_DIR = join(process.cwd(), 'deploy/observability');
export const PROMETHEUS_DIR = join(OBSERVABILITY_DIR, 'prometheus');

export interface ShippedQuery {
  where: string;
  expr: string;
}

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}
interface Dashboard {
  panels?: Panel[];
  templating?: { list?: { name: string; query?: string | { query?: string } }[] };
}

/** Grafana variables as Prometheus sees them with "All" selected. */
export function withAllVariables(expr: string): string {
  return expr.replace(/\$(namespace|service|instance)\b/g, '.*');
}

export function dashboardQueries(): ShippedQuery[] {
  const dir = join(OBSERVABILITY_DIR, 'grafana/dashboards');
  const queries: ShippedQuery[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json'))) {
    const dashboard = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Dashboard;
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

/** The series selectors of the dashboards' `label_values(<selector>, label)` variables. */
export function dashboardVariables(): { name: string; selector: string; label: string }[] {
  const dir = join(OBSERVABILITY_DIR, 'grafana/dashboards');
  const variables: { name: string; selector: string; label: string }[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json'))) {
    const dashboard = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Dashboard;
    for (const variable of dashboard.templating?.list ?? []) {
      const query = typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
      const match = /^label_values\((.+),\s*(\w+)\)$/.exec(query.trim());
      if (match) variables.push({ name: variable.name, selector: match[1]!, label: match[2]! });
    }
  }
  return variables;
}

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function rules(): Rule[] {
  const doc = parse(readFileSync(join(PROMETHEUS_DIR, 'alerts.yml'), 'utf8')) as {
    groups: { rules: Rule[] }[];
  };
  return doc.groups.flatMap((group) => group.rules);
}

export function ruleQueries(): ShippedQuery[] {
  return rules().map((rule) => ({
    where: `alerts.yml: ${rule.alert ?? rule.record ?? '?'}`,
    expr: rule.expr.trim(),
  }));
}

/** Names that recording rules define (queries may read them like series). */
export function recordedNames(): Set<string> {
  return new Set(rules().flatMap((rule) => (rule.record ? [rule.record] : [])));
}

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
  'round',
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

/** The series names a PromQL expression reads (recording-rule names included). */
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
    if (PROMQL_WORDS.has(word) || after.startsWith('(')) continue;
    if (/^\d*e\d+$/i.test(word) || word === 'e') continue;
    names.push(word);
  }
  return names;
}
