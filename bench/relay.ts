// B1 relay overhead: closed-loop `poll` through the whole chain (HTTP → api → history authorize
// → router → edge → back) against a baseline in the same run: a bare node:http server making one
// NATS request to a bare responder that returns the very poll reply captured from the chain.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '#test-support';
import { runLoad, type LoadResult } from './lib/loadgen.js';
import { cpuSecondsOf, machineFacts, writeResult } from './lib/machine.js';
import { forkReady, stopChild } from './lib/processes.js';
import { fixed, median, table } from './lib/stats.js';
import { BenchTether } from './lib/tether.js';
import { summarizeProfiles, type ProfileSummary } from './profile.js';
import type { BenchOptions } from './run.js';

const CONCURRENCIES = [1, 16, 64];
const BASELINE_SCRIPT = fileURLToPath(new URL('./baseline/baseline.js', import.meta.url));

/** The session's reply: a realistic short exchange, so the poll reply is a few hundred bytes. */
export const SCRIPT = {
  rules: [
    {
      steps: [
        {
          type: 'reply',
          text: 'I read the failing test and the function it calls. The bug is an off-by-one in the page size check; here is the fix and a test that pins it. '.repeat(
            3,
          ),
        },
      ],
    },
  ],
};

interface Installation {
  id: string;
  kind: string;
}
interface AgentResult {
  status: string;
  session_id?: string;
  revision?: number;
  running?: boolean;
  installations?: Installation[];
}

type Target = 'baseline' | 'chain';
interface Measured {
  target: Target;
  round: number;
  result: LoadResult;
  /** CPU µs per request of each server process during the run. */
  cpu_us_per_req: Record<string, number | null>;
}

/** Starts a session with one finished exchange and returns the poll request and its HTTP reply (B1 and the scaling run). */
export async function prepareSession(
  tether: BenchTether,
): Promise<{ body: Record<string, string>; reply: string }> {
  const edgeId = tether.edge.id;
  const discovered = await tether.call<AgentResult>('POST', '/api/v1/edge-agents', {
    edge_id: edgeId,
    action: 'discover',
  });
  const installation = discovered.data.installations?.find((candidate) => candidate.kind === 'scripted');
  if (!installation) throw new Error('The edge offers no scripted installation.');
  const project = '/tmp';
  const access = await tether.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: 'bench',
    kind: 'scripted',
    edge_id: edgeId,
    installation_id: installation.id,
    project,
  });
  const base = { edge_id: edgeId, access_id: access.data.id };
  const started = await tether.call<AgentResult>('POST', '/api/v1/edge-agents', {
    ...base,
    action: 'start',
    installation_id: installation.id,
    project,
  });
  const sessionId = started.data.session_id;
  if (!sessionId) throw new Error(`start answered ${started.raw}`);
  const session = { ...base, session_id: sessionId };
  await tether.call('POST', '/api/v1/edge-agents', {
    ...session,
    action: 'send',
    text: 'Why does the pager test fail?',
  });
  let cursor = started.data.revision ?? 0;
  for (let attempt = 0; attempt < 20; attempt++) {
    const watched = await tether.call<AgentResult>('POST', '/api/v1/edge-agents', {
      ...session,
      action: 'watch',
      cursor: String(cursor),
    });
    if (!watched.data.running && (watched.data.revision ?? 0) > (started.data.revision ?? 0)) break;
    cursor = watched.data.revision ?? cursor;
  }
  const body = { ...session, action: 'poll' };
  const polled = await tether.call<AgentResult>('POST', '/api/v1/edge-agents', body);
  if (polled.data.status !== 'ok') throw new Error(`poll answered ${polled.raw}`);
  return { body, reply: polled.raw };
}

function cpuSnapshot(pids: Record<string, number | undefined>): Record<string, number | null> {
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSecondsOf(pid)]));
}

export async function relay(options: BenchOptions): Promise<void> {
  const quick = options.quick;
  const rounds = quick ? 1 : 3;
  const warmupMs = quick ? 1_000 : 2_000;
  const durationMs = quick ? 3_000 : 10_000;
  const machine = machineFacts();
  const started = performance.now();

  const tether = new BenchTether({
    label: 'benchrelay',
    edge: true,
    script: SCRIPT,
    profileDir: options.profileDir,
    env: options.serviceEnv,
  });
  let responder;
  let front;
  let profiles: ProfileSummary[] = [];
  const measured: Measured[] = [];
  let replyBytes: number;
  const servicePids: Record<string, number | undefined> = {};
  let loadStartMs = 0;
  try {
    await tether.up();
    for (const name of ['api', 'router', 'history', 'edge'] as const)
      servicePids[name] = tether.stack.pid(name);
    const { body, reply } = await prepareSession(tether);
    replyBytes = Buffer.byteLength(reply);
    const payloadFile = join(tether.stack.options.edgeDataDir, '..', 'poll-reply.json');
    writeFileSync(payloadFile, reply);
    const subject = `${tether.stack.subjects.namespace}.bench.baseline`;
    const natsUrl = tether.stack.options.natsUrl;
    const port = await freePort();
    responder = await forkReady(BASELINE_SCRIPT, ['responder', natsUrl, subject, payloadFile]);
    front = await forkReady(BASELINE_SCRIPT, ['http', natsUrl, subject, String(port)]);
    const baselineReply = await (
      await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: JSON.stringify(body) })
    ).text();
    if (baselineReply !== reply) throw new Error('The baseline does not answer the captured poll reply.');

    const targets: Record<
      Target,
      { url: string; headers: Record<string, string>; pids: Record<string, number | undefined> }
    > = {
      baseline: {
        url: `http://127.0.0.1:${port}/`,
        headers: {},
        pids: { http: front.pid, responder: responder.pid },
      },
      chain: {
        url: `${tether.stack.apiUrl}/api/v1/edge-agents`,
        headers: { authorization: `Bearer ${tether.token}` },
        pids: {
          api: tether.stack.pid('api'),
          history: tether.stack.pid('history'),
          router: tether.stack.pid('router'),
          edge: tether.stack.pid('edge'),
        },
      },
    };
    loadStartMs = performance.now() - tether.spawnedAt;
    console.log(
      `B1 relay: poll reply ${replyBytes} bytes; ${rounds} round(s) × ${durationMs / 1000} s per target and concurrency (warm-up ${warmupMs / 1000} s).`,
    );
    for (const concurrency of CONCURRENCIES) {
      for (let round = 0; round < rounds; round++) {
        // Alternate which target goes first, so a drifting machine does not favour one.
        const order: Target[] = round % 2 === 0 ? ['baseline', 'chain'] : ['chain', 'baseline'];
        for (const target of order) {
          const { url, headers, pids } = targets[target];
          const before = cpuSnapshot(pids);
          const result = await runLoad({
            url,
            headers,
            bodies: [JSON.stringify(body)],
            concurrency,
            warmupMs,
            durationMs,
          });
          const after = cpuSnapshot(pids);
          const cpu: Record<string, number | null> = {};
          for (const name of Object.keys(pids)) {
            const used = (after[name] ?? Number.NaN) - (before[name] ?? Number.NaN);
            // Counted over warm-up + measurement; divide by every request of both phases (approx.).
            const requests = result.rps * ((warmupMs + durationMs) / 1000);
            cpu[name] = Number.isFinite(used) && requests > 0 ? Math.round((used * 1e6) / requests) : null;
          }
          measured.push({ target, round, result, cpu_us_per_req: cpu });
          console.log(
            `  ${target.padEnd(8)} c=${String(concurrency).padStart(2)} round ${round + 1}: ${fixed(result.rps, 0)} req/s, p50 ${fixed(result.latency_ms.p50, 3)} ms, p99 ${fixed(result.latency_ms.p99, 3)} ms, errors ${result.errors}`,
          );
        }
      }
    }
  } finally {
    await stopChild(front);
    await stopChild(responder);
    await tether.down();
    if (options.profileDir) profiles = summarizeProfiles(options.profileDir, servicePids, loadStartMs);
  }

  // Median of rounds per target and concurrency.
  const rows = CONCURRENCIES.map((concurrency) => {
    const pick = (target: Target) =>
      measured.filter((m) => m.target === target && m.result.concurrency === concurrency);
    const agg = (target: Target) => {
      const runs = pick(target);
      return {
        rps: median(runs.map((m) => m.result.rps)),
        p50: median(runs.map((m) => m.result.latency_ms.p50)),
        p99: median(runs.map((m) => m.result.latency_ms.p99)),
        errors: runs.reduce((sum, m) => sum + m.result.errors, 0),
      };
    };
    return { concurrency, baseline: agg('baseline'), chain: agg('chain') };
  });
  const figures = table(
    ['target', 'conc', 'req/s', 'p50 ms', 'p99 ms', 'errors'],
    rows.flatMap((row) =>
      (['baseline', 'chain'] as const).map((target) => [
        target,
        row.concurrency,
        fixed(row[target].rps, 0),
        fixed(row[target].p50, 3),
        fixed(row[target].p99, 3),
        row[target].errors,
      ]),
    ),
  );
  const ratios = rows.map((row) => ({
    concurrency: row.concurrency,
    p50_ratio: row.chain.p50 / row.baseline.p50,
    p99_ratio: row.chain.p99 / row.baseline.p99,
    rps_ratio: row.chain.rps / row.baseline.rps,
  }));
  const ratioTable = table(
    ['conc', 'p50 chain/base', 'p99 chain/base', 'req/s chain/base'],
    ratios.map((r) => [r.concurrency, fixed(r.p50_ratio), fixed(r.p99_ratio), fixed(r.rps_ratio)]),
  );
  const cpuTable = table(
    ['target', 'conc', 'CPU µs/req by process (median of rounds)'],
    CONCURRENCIES.flatMap((concurrency) =>
      (['baseline', 'chain'] as const).map((target) => {
        const runs = measured.filter((m) => m.target === target && m.result.concurrency === concurrency);
        const names = Object.keys(runs[0]?.cpu_us_per_req ?? {});
        const loadgen = median(runs.map((m) => m.result.loadgen_cpu_us_per_req));
        const parts = names.map(
          (name) => `${name} ${fixed(median(runs.map((m) => m.cpu_us_per_req[name] ?? Number.NaN)), 0)}`,
        );
        return [target, concurrency, [...parts, `loadgen ${fixed(loadgen, 0)}`].join(', ')];
      }),
    ),
  );
  const c16 = ratios.find((r) => r.concurrency === 16);
  const c1 = ratios.find((r) => r.concurrency === 1);
  const targetsMet = {
    p50_at_c16_within_2x: c16 ? c16.p50_ratio <= 2 : false,
    rps_at_c16_at_least_half: c16 ? c16.rps_ratio >= 0.5 : false,
  };
  const path = writeResult('relay', machine, {
    quick,
    service_env: options.serviceEnv,
    rounds,
    warmup_ms: warmupMs,
    duration_ms: durationMs,
    poll_reply_bytes: replyBytes,
    rows,
    ratios,
    targets_met: targetsMet,
    runs: measured,
    profiles,
    elapsed_s: (performance.now() - started) / 1000,
  });
  console.log('\n' + figures + '\n\n' + ratioTable + '\n\n' + cpuTable);
  for (const profile of profiles)
    console.log(`\nTop self time, ${profile.service} (${profile.file}):\n${profile.table}`);
  console.log(
    `\nTargets at c=16: p50 ≤ 2× baseline ${targetsMet.p50_at_c16_within_2x ? 'met' : 'missed'}, req/s ≥ 50 % ${targetsMet.rps_at_c16_at_least_half ? 'met' : 'missed'}. Result: ${path} (${fixed((performance.now() - started) / 1000, 1)} s).`,
  );
  console.log(
    `p50 ratio chain/baseline: c=1 ${fixed(c1?.p50_ratio ?? Number.NaN)}, c=16 ${fixed(c16?.p50_ratio ?? Number.NaN)}, c=64 ${fixed(ratios[2]?.p50_ratio ?? Number.NaN)}`,
  );
}
