// What the fault suite measures for each fault, from the load clients' record, and the table it
// prints (docs/reliability.md keeps a copy with the commit it ran on). Timings are reported,
// never asserted.
import type { Miss } from '../support/closed-loop.js';

export interface FaultWindow {
  name: string;
  /** The service was killed, or the dependency stopped. */
  downAt: number;
  /** The process was started again (the dependency accepts connections). */
  returnedAt: number;
  /** The service answered its readiness probe again. */
  readyAt: number;
  /** First send answered ok after `returnedAt`. */
  recoveredAt: number;
  /** Postgres held every send acknowledged so far as an accepted submission. */
  caughtUpAt: number;
  /** Where the next fault began (or the load stopped). */
  endAt: number;
}

export interface FaultFigures {
  fault: string;
  downMs: number;
  failed: number;
  notRetryable: number;
  kinds: string;
  acked: number;
  lost: number;
  duplicated: number;
  /** Back → the service (or what depends on the dependency) answers its readiness probe again. */
  readyMs: number;
  recoveryMs: number;
  killToSendMs: number;
  catchUpMs: number;
  /** Sends, watches and polls answered ok while the service was down (kill → ready). */
  okWhileDown: string;
  /** p50 and p99 of a send as its client saw it (first attempt → ok, retries included). */
  sendP50Ms: number;
  sendP99Ms: number;
}

/** The `q` quantile (nearest rank) of `values`; NaN when there are none. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

/** Failures are counted per request kind: `send: http 503 ×4`. */
function kinds(misses: Miss[]): string {
  const counts = new Map<string, number>();
  for (const miss of misses) {
    const key = `${miss.action}: ${miss.what.replace(/^transport: .*/, 'transport error')}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts.entries()].map(([key, count]) => `${key} ×${count}`).join('; ') || '–';
}

export function figuresOf(
  window: FaultWindow,
  misses: Miss[],
  answered: { at: number; action: string }[],
  effects: { acked: number; lost: number; duplicated: number },
  sends: { at: number; ms: number }[],
): FaultFigures {
  const sendMs = sends.filter((send) => send.at >= window.downAt && send.at < window.endAt).map((s) => s.ms);
  const inWindow = misses.filter((miss) => miss.at >= window.downAt && miss.at < window.endAt);
  const whileDown = answered.filter((call) => call.at > window.downAt && call.at < window.readyAt);
  const okCount = (action: string) => whileDown.filter((call) => call.action === action).length;
  return {
    fault: window.name,
    downMs: window.returnedAt - window.downAt,
    failed: inWindow.length,
    notRetryable: inWindow.filter((miss) => !miss.retryable).length,
    kinds: kinds(inWindow),
    ...effects,
    readyMs: window.readyAt - window.returnedAt,
    recoveryMs: window.recoveredAt - window.returnedAt,
    killToSendMs: window.recoveredAt - window.downAt,
    catchUpMs: window.caughtUpAt - window.returnedAt,
    okWhileDown: `${okCount('send')} / ${okCount('watch')} / ${okCount('poll')}`,
    sendP50Ms: quantile(sendMs, 0.5),
    sendP99Ms: quantile(sendMs, 0.99),
  };
}

const seconds = (ms: number) => (Number.isNaN(ms) ? 'never' : `${(ms / 1000).toFixed(1)} s`);

/** A Markdown table of the figures (the suite prints it; docs/reliability.md keeps one). */
export function table(rows: FaultFigures[]): string {
  const header = [
    'fault',
    'down',
    'failed requests (not retryable)',
    'acked sends',
    'lost',
    'duplicated',
    'ready (back → ready)',
    'recovery (back → first ok send)',
    'kill → first ok send',
    'history caught up (after back)',
    'ok while down: send / watch / poll',
    'send p50 / p99 (retries incl.)',
  ];
  const lines = rows.map((row) => [
    row.fault,
    seconds(row.downMs),
    `${row.failed} (${row.notRetryable})`,
    String(row.acked),
    String(row.lost),
    String(row.duplicated),
    seconds(row.readyMs),
    seconds(row.recoveryMs),
    seconds(row.killToSendMs),
    seconds(row.catchUpMs),
    row.okWhileDown,
    `${seconds(row.sendP50Ms)} / ${seconds(row.sendP99Ms)}`,
  ]);
  const render = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [render(header), render(header.map(() => '---')), ...lines.map(render)].join('\n');
}

/** The failures of each fault by kind, printed below the table. */
export function failureKinds(rows: FaultFigures[]): string {
  return rows.map((row) => `${row.fault}: ${row.kinds}`).join('\n');
}
