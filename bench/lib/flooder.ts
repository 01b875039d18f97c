// One user's flood (bench/flood.ts) in a process of its own, so its 2,000 sockets never share an
// event loop with the other user's latency measurement: SSE streams opened up to a concurrency
// and kept open until told to close, then a burst of sends at once. Reports the statuses.
import { fork } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';

export interface FloodSpec {
  streamUrl: string;
  streams: number;
  concurrency: number;
  sendUrl: string;
  sendBodies: string[];
  token: string;
}

export interface FloodOutcome {
  streams: Record<string, number>;
  sends: Record<string, number>;
}

function count(outcomes: Record<string, number>, status: number): void {
  outcomes[String(status)] = (outcomes[String(status)] ?? 0) + 1;
}

function openStream(url: string, token: string, open: (() => void)[]): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.resume();
        if (res.statusCode === 200) open.push(() => res.destroy());
      },
    );
    req.on('error', () => resolve(0));
    req.end();
  });
}

async function floodOnce(spec: FloodSpec, open: (() => void)[]): Promise<FloodOutcome> {
  const outcome: FloodOutcome = { streams: {}, sends: {} };
  let next = 0;
  await Promise.all(
    Array.from({ length: spec.concurrency }, async () => {
      while (next < spec.streams) {
        next += 1;
        count(outcome.streams, await openStream(spec.streamUrl, spec.token, open));
      }
    }),
  );
  await Promise.all(
    spec.sendBodies.map(async (body) => {
      const response = await fetch(spec.sendUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${spec.token}`, 'content-type': 'application/json' },
        body,
      });
      await response.arrayBuffer();
      count(outcome.sends, response.status);
    }),
  );
  return outcome;
}

/** Runs one flood in a fresh child; resolves when it is done, its streams closed with the child. */
export function runFlood(spec: FloodSpec): Promise<FloodOutcome> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--child'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: FloodOutcome | undefined;
    child.once('message', (message) => (result = message as FloodOutcome));
    child.once('error', reject);
    child.once('exit', (code) =>
      result ? resolve(result) : reject(new Error(`The flooder exited with code ${code}.`)),
    );
    child.send(spec);
  });
}

if (process.argv[2] === '--child' && process.send) {
  process.once('message', (spec: FloodSpec) => {
    const open: (() => void)[] = [];
    void floodOnce(spec, open).then(
      (outcome) => {
        for (const close of open) close();
        process.send?.(outcome, () => process.exit(0));
      },
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}
