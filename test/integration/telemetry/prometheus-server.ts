// A real Prometheus (Debian's `prometheus` package; .ci/run installs it) for tests: its own
// temporary storage, a loopback port, a generated scrape configuration and the shipped rules.
// The test stops it and removes its storage.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROMETHEUS_DIR } from './shipped-queries.js';

export interface ScrapeTarget {
  job: string;
  /** host:port of the target's /metrics. */
  address: string;
}

interface ApiAnswer<T> {
  status: 'success' | 'error';
  data?: T;
  error?: string;
  errorType?: string;
}

export class PrometheusServer {
  private process?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'tether-prometheus-'));
  private log = '';
  readonly url: string;

  constructor(private readonly port: number) {
    this.url = `http://127.0.0.1:${port}`;
  }

  /** Starts scraping `targets` every second, with the shipped alert rules loaded. */
  async start(targets: ScrapeTarget[]): Promise<void> {
    const scrapeConfigs = targets
      .map(
        (target) =>
          `  - job_name: ${target.job}\n    static_configs:\n      - targets: ['${target.address}']\n        labels: { namespace: tether-e2e }`,
      )
      .join('\n');
    const config = join(this.dir, 'prometheus.yml');
    writeFileSync(
      config,
      `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - ${join(PROMETHEUS_DIR, 'alerts.yml')}\nscrape_configs:\n${scrapeConfigs}\n`,
    );
    const child = spawn(
      'prometheus',
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(this.dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${this.port}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.process = child;
    const collect = (chunk: Buffer) => {
      this.log = (this.log + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const spawned = await new Promise<Error | undefined>((resolve) => {
      child.once('error', resolve);
      child.once('spawn', () => resolve(undefined));
    });
    if (spawned)
      throw new Error(`prometheus is not installed (apt-get install prometheus): ${spawned.message}`);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}:\n${this.log}`);
      const ready = await fetch(`${this.url}/-/ready`).catch(() => undefined);
      if (ready?.ok) return;
      await new Promise((done) => setTimeout(done, 250));
    }
    throw new Error(`prometheus did not become ready:\n${this.log}`);
  }

  /** An instant query; throws with Prometheus' error when the expression does not evaluate. */
  async query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
    const response = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const answer = (await response.json()) as ApiAnswer<{
      resultType: string;
      result: { metric: Record<string, string>; value: [number, string] }[] | [number, string];
    }>;
    if (answer.status !== 'success') throw new Error(`${expr}: ${answer.errorType}: ${answer.error}`);
    const result = answer.data!.result;
    return answer.data!.resultType === 'vector'
      ? (result as { metric: Record<string, string>; value: [number, string] }[])
      : [];
  }

  /** Every series name Prometheus holds. */
  async seriesNames(): Promise<Set<string>> {
    const response = await fetch(`${this.url}/api/v1/label/__name__/values`);
    const answer = (await response.json()) as ApiAnswer<string[]>;
    return new Set(answer.data ?? []);
  }

  /** Rule groups as Prometheus evaluates them (health `ok`, or `err` with lastError). */
  async ruleHealth(): Promise<{ name: string; health: string; lastError?: string }[]> {
    const response = await fetch(`${this.url}/api/v1/rules`);
    const answer = (await response.json()) as ApiAnswer<{
      groups: { rules: { name: string; health: string; lastError?: string }[] }[];
    }>;
    return (answer.data?.groups ?? []).flatMap((group) => group.rules);
  }

  output(): string {
    return this.log;
  }

  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (child && child.exitCode === null) {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
