// Parses a /metrics body with parse-prometheus-text-format, after a strict line check of our
// own (that parser is lenient): every sample line is `name{labels} value [timestamp]` and
// belongs to a family declared by `# TYPE`.
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';

const SAMPLE =
  /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (-?[0-9.eE+-]+|NaN|\+Inf|-Inf)( -?[0-9]+)?$/;
const TYPE = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/;
const HELP = /^# (?:HELP|UNIT) ([a-zA-Z_:][a-zA-Z0-9_:]*) .*$/;

export interface ParsedMetrics {
  families: PrometheusFamily[];
  /** Every series name present (histograms as `_bucket`, `_sum`, `_count`). */
  seriesNames: Set<string>;
  /** Sample lines with their labels, for label assertions. */
  samples: { name: string; labels: string }[];
}

export function parseMetrics(text: string): ParsedMetrics {
  const declared = new Set<string>();
  const seriesNames = new Set<string>();
  const samples: { name: string; labels: string }[] = [];
  text.split('\n').forEach((line, index) => {
    if (line === '') return;
    const type = TYPE.exec(line);
    if (type) return void declared.add(type[1]!);
    if (HELP.test(line)) return;
    if (line.startsWith('#')) throw new Error(`Line ${index + 1} is an unknown comment: ${line}`);
    const sample = SAMPLE.exec(line);
    if (!sample) throw new Error(`Line ${index + 1} is not a Prometheus sample: ${line}`);
    const name = sample[1]!;
    const family = name.replace(/_(bucket|sum|count|total)$/, '');
    if (!declared.has(name) && !declared.has(family)) {
      throw new Error(`Line ${index + 1}: ${name} has no # TYPE before it.`);
    }
    seriesNames.add(name);
    samples.push({ name, labels: sample[2] ?? '' });
  });
  return { families: parsePrometheusTextFormat(text), seriesNames, samples };
}
