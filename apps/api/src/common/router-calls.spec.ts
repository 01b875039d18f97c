import { RpcRemoteError, RpcUnavailableError } from '#messaging';
import { callWithResends, type ResendableCall } from './router-calls.js';

/** An attempt the test settles by hand, and the time it was given. */
interface Attempt {
  timeoutMs: number;
  resolve(value: string): void;
  reject(error: unknown): void;
}

function attempts() {
  const made: Attempt[] = [];
  const attempt = (timeoutMs: number) =>
    new Promise<string>((resolve, reject) => made.push({ timeoutMs, resolve, reject }));
  return { made, attempt };
}

const timeout = () => new RpcUnavailableError('tether.router.edge-agent', 'timeout');

describe('callWithResends', () => {
  let clock: number;
  const now = () => clock;
  beforeEach(() => (clock = 1_000));

  /** A call of 10 s in a fresh registry: its attempts, its result and its registry entry. */
  function started() {
    const calls = new Set<ResendableCall>();
    const { made, attempt } = attempts();
    const result = callWithResends(attempt, 10_000, calls, now);
    return { calls, made, attempt, result, call: [...calls][0]! };
  }

  it('answers with the first attempt that answers, and leaves the registry', async () => {
    const { calls, made, result, call } = started();
    expect(calls.size).toBe(1);
    clock += 3_000;
    expect(call.resend()).toBe(true);
    expect(made.map((one) => one.timeoutMs)).toEqual([10_000, 7_000]);
    made[1]!.resolve('from the replica left');
    made[0]!.resolve('late');
    await expect(result).resolves.toBe('from the replica left');
    expect(calls.size).toBe(0);
  });

  it('waits for a resent attempt when the first one times out', async () => {
    const { calls, made, result, call } = started();
    call.resend();
    made[0]!.reject(timeout());
    await Promise.resolve();
    expect(calls.size).toBe(1);
    made[1]!.resolve('answered');
    await expect(result).resolves.toBe('answered');
  });

  it('fails at once on an error reply or when nobody serves the subject any more', async () => {
    for (const error of [
      new RpcRemoteError('tether.router.edge-agent', 'internal', 'boom'),
      new RpcUnavailableError('tether.router.edge-agent', 'no_responders'),
    ]) {
      const { calls, made, result, call } = started();
      call.resend();
      made[1]!.reject(error);
      await expect(result).rejects.toBe(error);
      expect(calls.size).toBe(0);
    }
  });

  it('fails with the last timeout once every attempt timed out', async () => {
    const { made, result, call } = started();
    call.resend();
    const last = timeout();
    made[0]!.reject(timeout());
    made[1]!.reject(last);
    await expect(result).rejects.toBe(last);
  });

  it('resends at most twice, never once settled, and never with under a second left', async () => {
    const { calls, made, attempt, result, call } = started();
    expect([call.resend(), call.resend(), call.resend()]).toEqual([true, true, false]);
    made[0]!.resolve('done');
    await result;
    expect(call.resend()).toBe(false);

    const late = callWithResends(attempt, 10_000, calls, now);
    clock += 9_001;
    expect([...calls][0]!.resend()).toBe(false);
    made.at(-1)!.resolve('done');
    await late;
    expect(made).toHaveLength(4);
  });
});
