import { PassThrough } from 'node:stream';
import { OUTGOING_CONTROLS_MAX, STREAM_FRAME_MAX_BYTES } from './claude-limits.js';
import { ClaudeStream, type JsonObject, type StreamCloseReason } from './claude-stream.js';
import { AgentCallError } from '../agent-call.js';

function setup(onMessage: (message: JsonObject) => void = () => undefined) {
  const input = new PassThrough();
  const output = new PassThrough();
  const sent: JsonObject[] = [];
  output.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) sent.push(JSON.parse(line));
  });
  const closes: StreamCloseReason[] = [];
  const stream = new ClaudeStream({ input, output, onMessage, onClose: (reason) => closes.push(reason) });
  const feed = (value: unknown): void => void input.write(`${JSON.stringify(value)}\n`);
  const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  return { input, stream, sent, closes, feed, tick };
}

const requestId = (message: JsonObject | undefined): string => String(message?.request_id);

describe('ClaudeStream', () => {
  it('matches control responses to requests and hides the CLI error text', async () => {
    const { stream, sent, feed, tick } = setup();
    const ok = stream.control({ subtype: 'initialize' }, 1000);
    const bad = stream.control({ subtype: 'set_model', model: 'x' }, 1000);
    await tick();
    expect(sent.map((m) => (m.request as JsonObject).subtype)).toEqual(['initialize', 'set_model']);
    feed({
      type: 'control_response',
      response: { subtype: 'error', request_id: requestId(sent[1]), error: 'secret' },
    });
    feed({
      type: 'control_response',
      response: { subtype: 'success', request_id: requestId(sent[0]), response: { a: 1 } },
    });
    await expect(ok).resolves.toEqual({ a: 1 });
    const error = await bad.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentCallError);
    expect(error).toMatchObject({ reason: 'rejected', call: 'set_model' });
    expect((error as Error).message).toBe('agent call set_model failed: rejected');
  });

  it(`allows ${OUTGOING_CONTROLS_MAX} outgoing controls at once`, async () => {
    const { stream } = setup();
    const calls = Array.from({ length: OUTGOING_CONTROLS_MAX }, () =>
      stream.control({ subtype: 'interrupt' }, 1000),
    );
    const extra = await stream.control({ subtype: 'interrupt' }, 1000).catch((e: unknown) => e);
    expect(extra).toMatchObject({ reason: 'too_many_calls' });
    stream.close('closed_by_client');
    for (const call of calls) await expect(call).rejects.toBeInstanceOf(AgentCallError);
  });

  it('closes on a frame over 2 MiB, even one split across chunks', async () => {
    const { input, closes, tick } = setup();
    input.write('{"type":"assistant","x":"');
    input.write('y'.repeat(STREAM_FRAME_MAX_BYTES));
    await tick();
    expect(closes).toEqual(['frame_too_large']);
  });

  it('closes on a line that is not a typed JSON object', async () => {
    const { input, closes, tick } = setup();
    input.write('[1,2]\n');
    await tick();
    expect(closes).toEqual(['invalid_frame']);
  });

  it('writes user messages as one stream-json line each', async () => {
    const { stream, sent, tick } = setup();
    await expect(stream.sendUser('hello')).resolves.toBe(true);
    await tick();
    expect(sent).toEqual([
      { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'hello' }] } },
    ]);
    stream.close('closed_by_client');
    await expect(stream.sendUser('late')).resolves.toBe(false);
  });
});
