// The agent's stdio as an ACP message stream, with the edge's transport bounds: a frame over
// RPC_FRAME_MAX_BYTES, a line that is not a JSON object, or more than RPC_EVENT_QUEUE_MAX messages
// the connection has not taken yet end this connection (and so only this agent's session). The
// SDK's own `ndJsonStream` has a frame bound but skips invalid lines and queues without limit.
import type { Readable, Writable } from 'node:stream';
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk';
import { RPC_EVENT_QUEUE_MAX, RPC_FRAME_MAX_BYTES } from './acp-limits.js';

export type StreamCloseReason =
  'stream_ended' | 'frame_too_large' | 'invalid_frame' | 'event_queue_overflow' | 'write_failed';

export class StreamClosedError extends Error {
  constructor(readonly reason: StreamCloseReason) {
    super(`agent stream closed: ${reason}`);
    this.name = 'StreamClosedError';
  }
}

const NEWLINE = 0x0a;

/**
 * The `session/update` kinds of the pinned SDK's schema. The SDK validates every update before any
 * handler runs and logs each one it cannot parse; an update of another kind is dropped here
 * instead, so a flood of unknown kinds costs one log line per kind (onUnknownKind), not one each.
 */
const KNOWN_UPDATE_KINDS: ReadonlySet<string> = new Set([
  'user_message_chunk',
  'agent_message_chunk',
  'agent_thought_chunk',
  'tool_call',
  'tool_call_update',
  'plan',
  'available_commands_update',
  'current_mode_update',
  'config_option_update',
  'session_info_update',
  'usage_update',
  'notice',
  'compaction_update',
  'compaction_summary_chunk',
]);

/** The kind of a `session/update` notification the SDK would refuse, or undefined. */
function unknownUpdateKind(message: Record<string, unknown>): string | undefined {
  if (message.method !== 'session/update' || message.id !== undefined) return undefined;
  const params = message.params as { update?: { sessionUpdate?: unknown } } | undefined;
  const kind = params?.update?.sessionUpdate;
  if (typeof kind !== 'string') return '(none)';
  return KNOWN_UPDATE_KINDS.has(kind) ? undefined : kind;
}

/** Splits `input` into frames and hands each parsed object to the connection. */
export function boundedNdJsonStream(
  input: Readable,
  output: Writable,
  onClose: (reason: StreamCloseReason) => void,
  onUnknownKind: (kind: string) => void,
): Stream {
  let closed = false;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let controller!: ReadableStreamDefaultController<AnyMessage>;

  const fail = (reason: StreamCloseReason): void => {
    if (closed) return;
    closed = true;
    pending = [];
    input.removeAllListeners('data');
    input.resume(); // Keep draining so the child never blocks on a full pipe before it is killed.
    try {
      if (reason === 'stream_ended') controller.close();
      else controller.error(new StreamClosedError(reason));
    } catch {
      // Already closed by the consumer.
    }
    onClose(reason);
  };

  const onLine = (line: Buffer): void => {
    const text = line.toString('utf8').trim();
    if (text === '') return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      fail('invalid_frame');
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      fail('invalid_frame');
      return;
    }
    const unknown = unknownUpdateKind(message as Record<string, unknown>);
    if (unknown !== undefined) {
      onUnknownKind(unknown);
      return;
    }
    controller.enqueue(message as AnyMessage);
    // A high-water mark of 0 makes desiredSize the negated backlog.
    if ((controller.desiredSize ?? 0) < -RPC_EVENT_QUEUE_MAX) fail('event_queue_overflow');
  };

  const onData = (chunk: Buffer): void => {
    let start = 0;
    while (!closed) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline === -1) break;
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      if (pendingBytes + piece.length > RPC_FRAME_MAX_BYTES) {
        fail('frame_too_large');
        return;
      }
      const line = pendingBytes === 0 ? piece : Buffer.concat([...pending, piece]);
      pending = [];
      pendingBytes = 0;
      onLine(line);
    }
    if (closed || start >= chunk.length) return;
    const rest = chunk.subarray(start);
    if (pendingBytes + rest.length > RPC_FRAME_MAX_BYTES) {
      fail('frame_too_large');
      return;
    }
    pending.push(Buffer.from(rest));
    pendingBytes += rest.length;
  };

  const readable = new ReadableStream<AnyMessage>(
    {
      start(c) {
        controller = c;
        input.on('data', onData);
        input.once('end', () => fail('stream_ended'));
        input.once('error', () => fail('stream_ended'));
        output.on('error', () => fail('write_failed'));
      },
      cancel() {
        closed = true;
        input.removeListener('data', onData);
      },
    },
    { highWaterMark: 0 },
  );

  const writable = new WritableStream<AnyMessage>({
    write(message) {
      if (closed) throw new StreamClosedError('write_failed');
      const line = JSON.stringify(message);
      // A frame the agent could not accept is refused here; the caller's request fails alone.
      if (Buffer.byteLength(line) > RPC_FRAME_MAX_BYTES) throw new StreamClosedError('frame_too_large');
      output.write(`${line}\n`);
    },
  });
  return { readable, writable };
}
