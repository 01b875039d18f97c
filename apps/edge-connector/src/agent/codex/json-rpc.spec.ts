import { PassThrough } from 'node:stream';
import { RPC_EVENT_QUEUE_MAX, RPC_FRAME_MAX_BYTES, RPC_PENDING_CALLS_MAX } from './codex-limits.js';
import { JsonRpcConnection, type CloseReason, type InboundMessage } from './json-rpc.js';
import { AgentCallError } from '../agent-call.js';

function setup(onMessage: (message: InboundMessage) => void | Promise<void> = () => undefined) {
  const input = new PassThrough();
  const output = new PassThrough();
  const sent: Record<string, unknown>[] = [];
  output.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) sent.push(JSON.parse(line));
  });
  const closes: CloseReason[] = [];
  const rpc = new JsonRpcConnection({ input, output, onMessage, onClose: (reason) => closes.push(reason) });
  const feed = (value: unknown): void => void input.write(`${JSON.stringify(value)}\n`);
  const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  return { input, rpc, sent, closes, feed, tick };
}

describe('JsonRpcConnection', () => {
  it('matches answers to calls and hides native error text', async () => {
    const { rpc, sent, feed, tick } = setup();
    const ok = rpc.call<{ v: number }>('a', {}, 1000);
    const bad = rpc.call('b', {}, 1000);
    await tick();
    expect(sent.map((m) => m.method)).toEqual(['a', 'b']);
    feed({ id: sent[1]!.id, error: { code: -32600, message: 'secret detail' } });
    feed({ id: sent[0]!.id, result: { v: 1 } });
    await expect(ok).resolves.toEqual({ v: 1 });
    const error = await bad.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentCallError);
    expect(error).toMatchObject({ reason: 'rejected', call: 'b', code: -32600 });
    expect((error as Error).message).toBe('agent call b failed: rejected');
  });

  it('reassembles frames split across chunks', async () => {
    const messages: InboundMessage[] = [];
    const { input, tick } = setup((m) => void messages.push(m));
    const line = JSON.stringify({ method: 'n', params: { x: 'y' } });
    input.write(line.slice(0, 5));
    input.write(`${line.slice(5)}\n{"id":3,"method":"req","params":{}}\n`);
    await tick();
    expect(messages).toEqual([
      { kind: 'notification', method: 'n', params: { x: 'y' } },
      { kind: 'request', id: 3, method: 'req', params: {} },
    ]);
  });

  it('closes on a frame over the size limit', async () => {
    const { input, closes, tick } = setup();
    input.write('x'.repeat(RPC_FRAME_MAX_BYTES + 1));
    await tick();
    expect(closes).toEqual(['frame_too_large']);
  });

  it('refuses a call beyond the pending limit', async () => {
    const { rpc } = setup();
    const calls = Array.from({ length: RPC_PENDING_CALLS_MAX }, (_, i) =>
      rpc.call(`m${i}`, {}, 1000).catch(() => undefined),
    );
    await expect(rpc.call('over', {}, 1000)).rejects.toMatchObject({ reason: 'too_many_calls' });
    rpc.close('closed_by_client');
    await Promise.all(calls);
  });

  it('times out a call that gets no answer', async () => {
    const { rpc } = setup();
    await expect(rpc.call('slow', {}, 10)).rejects.toBeInstanceOf(AgentCallError);
    expect(rpc.pendingCalls).toBe(0);
  });

  it('closes instead of dropping when a held consumer lets the queue overflow', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { feed, closes, tick } = setup(() => held);
    for (let i = 0; i <= RPC_EVENT_QUEUE_MAX + 1; i++) feed({ method: 'n', params: { i } });
    await tick();
    expect(closes).toEqual(['event_queue_overflow']);
    release();
  });

  it('rejects pending calls when the stream ends', async () => {
    const { rpc, input, closes } = setup();
    const call = rpc.call('a', {}, 1000);
    input.end();
    await expect(call).rejects.toMatchObject({ reason: 'closed' });
    expect(closes).toEqual(['stream_ended']);
  });

  it('closes on a line that is not JSON', async () => {
    const { input, closes, tick } = setup();
    input.write('not json\n');
    await tick();
    expect(closes).toEqual(['invalid_frame']);
  });
});
