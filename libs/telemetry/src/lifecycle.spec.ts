import { jest } from '@jest/globals';
import { stopOnSignals } from './lifecycle.js';
import { startOpsServer, type OpsServer } from './ops-server.js';

/** Runs stopOnSignals on SIGUSR2 with process.exit captured; resolves with the exit code. */
function exitOf(options: Parameters<typeof stopOnSignals>[0]): { signal(): void; exited: Promise<number> } {
  let resolveExit: (code: number) => void = () => undefined;
  const exited = new Promise<number>((resolve) => (resolveExit = resolve));
  jest.spyOn(process, 'exit').mockImplementation(((code?: number) => {
    resolveExit(code ?? 0);
    return undefined as never;
  }) as typeof process.exit);
  stopOnSignals({ ...options, signals: ['SIGUSR2'] });
  return { signal: () => void process.emit('SIGUSR2'), exited };
}

afterEach(() => {
  process.removeAllListeners('SIGUSR2');
  jest.restoreAllMocks();
});

describe('graceful shutdown', () => {
  let ops: OpsServer;
  beforeEach(async () => {
    ops = await startOpsServer({
      service: 'spec',
      port: 0,
      host: '127.0.0.1',
      checks: { nats: () => Promise.resolve() },
    });
  });
  afterEach(async () => {
    await ops.close().catch(() => undefined);
  });

  it('answers /readyz 503 from the signal on, while the service is still stopping, then exits 0', async () => {
    const url = ops.url!;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    let finishStop: () => void = () => undefined;
    const stop = jest.fn(() => new Promise<void>((resolve) => (finishStop = resolve)));
    const run = exitOf({
      service: 'spec',
      stop,
      graceMs: 10_000,
      ops: { ...ops, close: () => Promise.resolve() },
    });
    run.signal();
    run.signal();
    const draining = await fetch(`${url}/readyz`);
    expect(draining.status).toBe(503);
    expect(await draining.json()).toEqual({ ready: false, draining: true, checks: {} });
    // Liveness is unaffected: the process is healthy, only no longer taking work.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    finishStop();
    expect(await run.exited).toBe(0);
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it('exits 1 when the work does not stop within the grace period', async () => {
    const run = exitOf({ service: 'spec', stop: () => new Promise<void>(() => undefined), graceMs: 50, ops });
    run.signal();
    expect(await run.exited).toBe(1);
  });

  it('exits 1 when stopping fails', async () => {
    const run = exitOf({
      service: 'spec',
      stop: () => Promise.reject(new Error('drain failed')),
      graceMs: 1_000,
    });
    run.signal();
    expect(await run.exited).toBe(1);
  });
});
