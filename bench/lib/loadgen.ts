// Closed-loop HTTP load generator. It runs in its own process (forked by `runLoad`) so it never
// shares an event loop with the servers it measures: N workers, each with one keep-alive
// connection, send a request, wait for the whole reply, and send the next one.
import { fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { summarize, type LatencySummary } from './stats.js';

export interface LoadSpec {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  /** Worker i sends bodies[i % bodies.length]. */
  bodies: string[];
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** Count requests sent inside the window even when they finish after it (long waits: watch). */
  countLate?: boolean;
}

export interface LoadResult {
  concurrency: number;
  duration_s: number;
  requests: number;
  rps: number;
  errors: number;
  /** Latency in ms of the requests that finished inside the measured window. */
  latency_ms: LatencySummary;
  /** The load generator's own CPU per request (µs), to judge how much of the box it took. */
  loadgen_cpu_us_per_req: number;
}

interface Reply {
  status: number;
  body: string;
}

function send(
  agent: Agent,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function generate(spec: LoadSpec): Promise<LoadResult> {
  const url = new URL(spec.url);
  const method = spec.method ?? 'POST';
  const headers = { 'content-type': 'application/json', ...spec.headers };
  const agent = new Agent({
    keepAlive: true,
    maxSockets: spec.concurrency,
    maxFreeSockets: spec.concurrency,
  });
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const measureFrom = start + spec.warmupMs;
  const stopAt = measureFrom + spec.durationMs;
  let cpuAtMeasure: NodeJS.CpuUsage | undefined;

  const worker = async (index: number) => {
    const body = spec.bodies[index % spec.bodies.length] ?? '';
    while (performance.now() < stopAt) {
      const sent = performance.now();
      let ok: boolean;
      try {
        const reply = await send(agent, url, method, headers, body);
        ok = reply.status >= 200 && reply.status < 300;
      } catch {
        ok = false;
      }
      const done = performance.now();
      if (sent >= measureFrom && (done <= stopAt || spec.countLate)) {
        if (ok) latencies.push(done - sent);
        else errors++;
      }
      if (!ok) await new Promise((resume) => setTimeout(resume, 10));
    }
  };
  const warmTimer = setTimeout(() => (cpuAtMeasure = process.cpuUsage()), spec.warmupMs);
  await Promise.all(Array.from({ length: spec.concurrency }, (_, index) => worker(index)));
  clearTimeout(warmTimer);
  const cpu = process.cpuUsage(cpuAtMeasure);
  agent.destroy();
  const seconds = spec.durationMs / 1000;
  return {
    concurrency: spec.concurrency,
    duration_s: seconds,
    requests: latencies.length,
    rps: latencies.length / seconds,
    errors,
    latency_ms: summarize(latencies),
    loadgen_cpu_us_per_req: latencies.length ? (cpu.user + cpu.system) / latencies.length : Number.NaN,
  };
}

/** Runs one load in a fresh child process and returns its figures. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--child'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: LoadResult | undefined;
    child.once('message', (message) => (result = message as LoadResult));
    child.once('error', reject);
    child.once('exit', (code) =>
      result ? resolve(result) : reject(new Error(`The load generator exited with code ${code}.`)),
    );
    child.send(spec);
  });
}

if (process.argv[2] === '--child' && process.send) {
  process.once('message', (spec: LoadSpec) => {
    void generate(spec).then(
      (result) => process.send?.(result, () => process.exit(0)),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}
