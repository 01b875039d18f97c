import { PassThrough } from 'node:stream';
import { boundedNdJsonStream, type StreamCloseReason } from './acp-stream.js';

function open() {
  const input = new PassThrough();
  const output = new PassThrough();
  const closed: StreamCloseReason[] = [];
  const unknown: string[] = [];
  const stream = boundedNdJsonStream(
    input,
    output,
    (reason) => closed.push(reason),
    (kind) => unknown.push(kind),
  );
  return {
    input,
    output,
    closed,
    unknown,
    reader: stream.readable.getReader(),
    writer: stream.writable.getWriter(),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('boundedNdJsonStream', () => {
  it('reads frames split across chunks and writes one line per message', async () => {
    const s = open();
    s.input.write('{"jsonrpc":"2.0","id":1,');
    s.input.write('"result":{}}\n\n');
    expect((await s.reader.read()).value).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    await s.writer.write({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 's' } });
    expect(String(s.output.read())).toBe(
      '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}\n',
    );
  });

  it('closes on a frame over 2 MiB, before the newline arrives', async () => {
    const s = open();
    s.input.write('{"x":"' + 'a'.repeat(2 * 1024 * 1024 + 1));
    await tick();
    expect(s.closed).toEqual(['frame_too_large']);
  });

  it('closes on a line that is not a JSON object', async () => {
    const s = open();
    s.input.write('[1,2]\n');
    await tick();
    expect(s.closed).toEqual(['invalid_frame']);
  });

  it('closes when more than 64 messages wait for the connection', async () => {
    const s = open();
    const line =
      '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}\n';
    s.input.write(line.repeat(64));
    await tick();
    expect(s.closed).toEqual([]);
    s.input.write(line);
    await tick();
    expect(s.closed).toEqual(['event_queue_overflow']);
  });

  it('drops updates of unknown kinds before the SDK sees them', async () => {
    const s = open();
    s.input.write(
      '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"made_up"}}}\n',
    );
    s.input.write('{"jsonrpc":"2.0","id":2,"result":{}}\n');
    expect((await s.reader.read()).value).toMatchObject({ id: 2 });
    expect(s.unknown).toEqual(['made_up']);
  });

  it('refuses to write a frame over 2 MiB without closing', async () => {
    const s = open();
    await expect(
      s.writer.write({ jsonrpc: '2.0', method: 'x', params: { a: 'a'.repeat(2 * 1024 * 1024) } }),
    ).rejects.toThrow();
    expect(s.closed).toEqual([]);
  });
});
