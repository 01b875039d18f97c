// Percentiles and plain-text tables for the benchmark reports.

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function summarize(samples: number[] | Float64Array): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  let total = 0;
  for (const value of sorted) total += value;
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? (sorted[sorted.length - 1] ?? Number.NaN) : Number.NaN,
    mean: sorted.length ? total / sorted.length : Number.NaN,
  };
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

export function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/** A Markdown-compatible table (it reads fine in a terminal too). */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = rows.map((row) => row.map(String));
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...cells.map((row) => (row[column] ?? '').length)),
  );
  const line = (row: string[]) =>
    '| ' + row.map((cell, column) => cell.padStart(widths[column] ?? 0)).join(' | ') + ' |';
  return [
    line(headers),
    '|' + widths.map((width) => '-'.repeat(width + 1) + ':').join('|') + '|',
    ...cells.map(line),
  ].join('\n');
}

/** A table of latency summaries, a row a measure: its p50, p90, p99 and max in ms. */
export function latencyTable(rows: [label: string, summary: LatencySummary][]): string {
  return table(
    ['measure', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
    rows.map(([label, s]) => [label, fixed(s.p50), fixed(s.p90), fixed(s.p99), fixed(s.max)]),
  );
}
