// The agent's stdio as an ACP message stream, with the edge's transport bounds: a frame over
// RPC_FRAME_MAX_BYTES, a line that is not a JSON object, or more than RPC_EVENT_QUEUE_MAX messages
// the connection has not taken yet end this connection (and so only this agent's session). The
// SDK's own `ndJsonStream` has a frame bound but skips invalid lines and queues without limit.
import type { Readable, Writable } from 'node:stream';
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk';
import { LineFramer, parseObjectLine } from '../stdio-lines.js';
import { RPC_EVENT_QUEUE_MAX, RPC_FRAME_MAX_BYTES } from './acp-limits.js';

export type StreamCloseReason =
  'stream_ended' | 'frame_too_large' | 'invalid_frame' | 'event_queue_overflow' | 'write_failed';

export class StreamClosedError extends Error {
  constructor(readonly reason: StreamCloseReason) {
    super(`agent stream closed: ${reason}`);
    this.name = 'StreamClosedError';
  }
}

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

/** Splits `input` into frames and hands each parsed object to the connection's readable side. */
class FrameReader {
  closed = false;
  private readonly framer = new LineFramer({
    maxBytes: RPC_FRAME_MAX_BYTES,
    onLine: (line) => this.onLine(line),
    onTooLarge: () => this.fail('frame_too_large'),
    stopped: () => this.closed,
  });
  private controller!: ReadableStreamDefaultController<AnyMessage>;

  constructor(
    private readonly input: Readable,
    private readonly onClose: (reason: StreamCloseReason) => void,
    private readonly onUnknownKind: (kind: string) => void,
  ) {}

  start(controller: ReadableStreamDefaultController<AnyMessage>, output: Writable): void {
    this.controller = controller;
    this.input.on('data', this.onData);
    this.input.once('end', () => this.fail('stream_ended'));
    this.input.once('error', () => this.fail('stream_ended'));
    output.on('error', () => this.fail('write_failed'));
  }

  cancel(): void {
    this.closed = true;
    this.input.removeListener('data', this.onData);
  }

  private fail(reason: StreamCloseReason): void {
    if (this.closed) return;
    this.closed = true;
    this.framer.clear();
    this.input.removeAllListeners('data');
    this.input.resume(); // Keep draining so the child never blocks on a full pipe before it is killed.
    try {
      if (reason === 'stream_ended') this.controller.close();
      else this.controller.error(new StreamClosedError(reason));
    } catch {
      // Already closed by the consumer.
    }
    this.onClose(reason);
  }

  private onLine(line: Buffer): void {
    const message = parseObjectLine(line, true);
    if (message === 'blank') return;
    if (message === 'invalid') {
      this.fail('invalid_frame');
      return;
    }
    const unknown = unknownUpdateKind(message);
    if (unknown !== undefined) {
      this.onUnknownKind(unknown);
      return;
    }
    this.controller.enqueue(message as AnyMessage);
    // A high-water mark of 0 makes desiredSize the negated backlog.
    if ((this.controller.desiredSize ?? 0) < -RPC_EVENT_QUEUE_MAX) this.fail('event_queue_overflow');
  }

  private readonly onData = (chunk: Buffer): void => this.framer.push(chunk);
}

/** The agent's stdio as the ACP SDK's message stream, within the edge's transport bounds. */
export function boundedNdJsonStream(
  input: Readable,
  output: Writable,
  onClose: (reason: StreamCloseReason) => void,
  onUnknownKind: (kind: string) => void,
): Stream {
  const reader = new FrameReader(input, onClose, onUnknownKind);
  const readable = new ReadableStream<AnyMessage>(
    {
      start: (controller) => reader.start(controller, output),
      cancel: () => reader.cancel(),
    },
    { highWaterMark: 0 },
  );
  const writable = new WritableStream<AnyMessage>({
    write(message) {
      if (reader.closed) throw new StreamClosedError('write_failed');
      const line = JSON.stringify(message);
      // A frame the agent could not accept is refused here; the caller's request fails alone.
      if (Buffer.byteLength(line) > RPC_FRAME_MAX_BYTES) throw new StreamClosedError('frame_too_large');
      output.write(`${line}\n`);
    },
  });
  return { readable, writable };
}
