import { NextCall } from './next-call.js';

/** A call whose answers the test gives, one per call made, in order. */
function gated() {
  const pending: { resolve: (value: string) => void; reject: (error: Error) => void }[] = [];
  const call = () =>
    new Promise<string>((resolve, reject) => {
      pending.push({ resolve, reject });
    });
  return { pending, call };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('NextCall', () => {
  it('calls at once when nothing is in flight, and frees the key once answered', async () => {
    const calls = new NextCall<string>();
    const { pending, call } = gated();
    const answer = calls.run('k', call);
    expect(pending).toHaveLength(1);
    expect(calls.size).toBe(1);
    pending[0]!.resolve('a');
    await expect(answer).resolves.toBe('a');
    expect(calls.size).toBe(0);
  });

  it('gives callers who asked during a call the answer of one next call, never the earlier one', async () => {
    const calls = new NextCall<string>();
    const { pending, call } = gated();
    const first = calls.run('k', call);
    const during = [calls.run('k', call), calls.run('k', call), calls.run('k', call)];
    // Nothing more is sent while the first call runs.
    expect(pending).toHaveLength(1);
    pending[0]!.resolve('before');
    await expect(first).resolves.toBe('before');
    await flush();
    // One call for all three, started after the first ended.
    expect(pending).toHaveLength(2);
    pending[1]!.resolve('after');
    await expect(Promise.all(during)).resolves.toEqual(['after', 'after', 'after']);
    expect(calls.size).toBe(0);
  });

  it('queues a caller who asks while the next call runs behind that one', async () => {
    const calls = new NextCall<string>();
    const { pending, call } = gated();
    void calls.run('k', call);
    const second = calls.run('k', call);
    pending[0]!.resolve('1');
    await flush();
    expect(pending).toHaveLength(2);
    const third = calls.run('k', call);
    pending[1]!.resolve('2');
    await expect(second).resolves.toBe('2');
    await flush();
    expect(pending).toHaveLength(3);
    pending[2]!.resolve('3');
    await expect(third).resolves.toBe('3');
  });

  it('starts the next call after a failed one, and shares each failure only with its own callers', async () => {
    const calls = new NextCall<string>();
    const { pending, call } = gated();
    const first = calls.run('k', call);
    const next = calls.run('k', call);
    pending[0]!.reject(new Error('history timed out'));
    await expect(first).rejects.toThrow('history timed out');
    await flush();
    pending[1]!.resolve('back');
    await expect(next).resolves.toBe('back');
  });

  it('keeps keys apart', async () => {
    const calls = new NextCall<string>();
    const { pending, call } = gated();
    const a = calls.run('a', call);
    const b = calls.run('b', call);
    expect(pending).toHaveLength(2);
    pending[1]!.resolve('for b');
    pending[0]!.resolve('for a');
    await expect(Promise.all([a, b])).resolves.toEqual(['for a', 'for b']);
  });

  it('turns a call that throws synchronously into a rejection and frees the key', async () => {
    const calls = new NextCall<string>();
    await expect(
      calls.run('k', () => {
        throw new Error('no connection');
      }),
    ).rejects.toThrow('no connection');
    await flush();
    expect(calls.size).toBe(0);
  });
});
