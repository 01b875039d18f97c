// The pieces every line-framed stdio transport of the drivers shares (Codex JSON-RPC, Claude Code
// stream-json, ACP): cutting the child's output into bounded lines, a bounded in-order queue for
// the consumer, and the table of requests awaiting the child's answer. Each transport keeps its own
// message shapes, close reasons and errors.

import type { Readable, Writable } from 'node:stream';
import { AgentCallError } from './agent-call.js';

const NEWLINE = 0x0a;

export interface LineFramerOptions {
  /** The largest line, without its newline; a longer one (even unfinished) calls onTooLarge. */
  maxBytes: number;
  onLine: (line: Buffer) => void;
  onTooLarge: () => void;
  /** True once the transport closed: no further line is handed out. */
  stopped: () => boolean;
}

/** Cuts a byte stream into newline-terminated lines, holding an unfinished tail within the bound. */
export class LineFramer {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;

  constructor(private readonly options: LineFramerOptions) {}

  /** Drops an unfinished tail (the transport closed). */
  clear(): void {
    this.buffered = [];
  }

  push(chunk: Buffer): void {
    const { maxBytes, stopped } = this.options;
    let start = 0;
    while (!stopped()) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline === -1) break;
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      if (this.bufferedBytes + piece.length > maxBytes) {
        this.options.onTooLarge();
        return;
      }
      const line = this.bufferedBytes === 0 ? piece : Buffer.concat([...this.buffered, piece]);
      this.buffered = [];
      this.bufferedBytes = 0;
      this.options.onLine(line);
    }
    if (stopped() || start >= chunk.length) return;
    const rest = chunk.subarray(start);
    if (this.bufferedBytes + rest.length > maxBytes) {
      this.options.onTooLarge();
      return;
    }
    this.buffered.push(Buffer.from(rest));
    this.bufferedBytes += rest.length;
  }
}

export interface InboundQueueOptions<T> {
  /** Messages the consumer has not taken yet; one more calls onOverflow instead of queueing. */
  max: number;
  /** May return a promise to hold the queue until it settles. */
  consume: (message: T) => void | Promise<void>;
  onOverflow: () => void;
  stopped: () => boolean;
}

/** Hands inbound messages to one consumer in order, one at a time, within a bound. */
export class InboundQueue<T> {
  private readonly queue: T[] = [];
  private draining = false;

  constructor(private readonly options: InboundQueueOptions<T>) {}

  clear(): void {
    this.queue.length = 0;
  }

  push(message: T): void {
    // The reference closes rather than drops: a lost event would leave a session lying about its state.
    if (this.queue.length >= this.options.max) {
      this.options.onOverflow();
      return;
    }
    this.queue.push(message);
    this.drain();
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    while (!this.options.stopped() && this.queue.length > 0) {
      const message = this.queue.shift()!;
      let pending: void | Promise<void>;
      try {
        pending = this.options.consume(message);
      } catch {
        // The consumer guards itself; a throw must not stop the stream.
        pending = undefined;
      }
      if (pending instanceof Promise) {
        // An asynchronous consumer holds the queue; messages arriving meanwhile wait (bounded).
        void pending
          .catch(() => undefined)
          .finally(() => {
            this.draining = false;
            this.drain();
          });
        return;
      }
    }
    this.draining = false;
  }
}

export interface AwaitedReply {
  /** What was asked (a method or control subtype), for the transport's errors. */
  label: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** Requests sent to the child and not answered yet, each with its deadline. */
export class AwaitedReplies<K> {
  private readonly entries = new Map<K, AwaitedReply & { timer: NodeJS.Timeout }>();

  get size(): number {
    return this.entries.size;
  }

  /** Registers `id`, then sends; a send that fails rejects at once as closed. */
  open(id: K, label: string, timeoutMs: number, send: () => boolean): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.entries.delete(id);
        reject(new AgentCallError('timeout', label));
      }, timeoutMs);
      this.entries.set(id, { label, resolve, reject, timer });
      if (!send()) {
        clearTimeout(timer);
        this.entries.delete(id);
        reject(new AgentCallError('closed', label));
      }
    });
  }

  /** The request `id` answers, taken off the table; undefined for a late or unknown answer. */
  take(id: K): AwaitedReply | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    this.entries.delete(id);
    clearTimeout(entry.timer);
    return entry;
  }

  /** Fails every request still waiting (the transport closed). */
  rejectAll(): void {
    for (const [id, entry] of this.entries) {
      clearTimeout(entry.timer);
      entry.reject(new AgentCallError('closed', entry.label));
      this.entries.delete(id);
    }
  }
}

export type JsonObject = Record<string, unknown>;

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One line as a JSON object: 'blank' for an empty line (skipped), 'invalid' for anything else.
 * `trim` parses the line without the white space String#trim strips (ACP's reader does; JSON.parse
 * alone refuses a few of those characters, such as a byte-order mark).
 */
export function parseObjectLine(line: Buffer, trim = false): JsonObject | 'blank' | 'invalid' {
  const raw = line.toString('utf8');
  const text = trim ? raw.trim() : raw;
  if (text.trim() === '') return 'blank';
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return 'invalid';
  }
  return isJsonObject(message) ? message : 'invalid';
}

/** Why a line channel stopped, for every protocol; a protocol may add reasons of its own. */
export type LineCloseReason =
  | 'stream_ended'
  | 'frame_too_large'
  | 'invalid_frame'
  | 'event_queue_overflow'
  | 'write_failed'
  | 'closed_by_client';

export interface JsonLinesChannelOptions<M, R extends string> {
  input: Readable;
  output: Writable;
  /** The largest line either way. */
  frameMaxBytes: number;
  /** Inbound messages the consumer has not taken yet; one more closes the channel. */
  queueMax: number;
  consume: (message: M) => void | Promise<void>;
  /** Called once when the channel stops for any reason. */
  onClose: (reason: R) => void;
}

/**
 * One JSON object per line each way over a child's stdio, within the transport bounds: the
 * protocol subclass reads each line (onLine) and matches answers to `pending` requests.
 */
export abstract class JsonLinesChannel<M, K, R extends string> {
  protected readonly pending: AwaitedReplies<K>;
  protected readonly queue: InboundQueue<M>;
  private readonly framer: LineFramer;
  private closedReason: R | LineCloseReason | undefined;

  constructor(private readonly channel: JsonLinesChannelOptions<M, R | LineCloseReason>) {
    const stopped = (): boolean => this.closed;
    this.pending = new AwaitedReplies<K>();
    this.queue = new InboundQueue({
      max: channel.queueMax,
      consume: channel.consume,
      onOverflow: () => this.close('event_queue_overflow'),
      stopped,
    });
    this.framer = new LineFramer({
      maxBytes: channel.frameMaxBytes,
      onLine: (line) => this.onLine(line),
      onTooLarge: () => this.close('frame_too_large'),
      stopped,
    });
    channel.input.on('data', (chunk: Buffer) => this.framer.push(chunk));
    channel.input.on('end', () => this.close('stream_ended'));
    channel.input.on('error', () => this.close('stream_ended'));
    channel.output.on('error', () => this.close('write_failed'));
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  close(reason: R | LineCloseReason): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    this.framer.clear();
    this.queue.clear();
    this.pending.rejectAll();
    this.channel.onClose(reason);
  }

  protected abstract onLine(line: Buffer): void;

  /** Writes one line; false when closed, too large, or the pipe threw (which closes). */
  protected write(message: JsonObject, done?: (error?: Error | null) => void): boolean {
    if (this.closed) return false;
    const line = JSON.stringify(message);
    if (Buffer.byteLength(line) > this.channel.frameMaxBytes) return false;
    try {
      this.channel.output.write(`${line}\n`, done);
      return true;
    } catch {
      this.close('write_failed');
      return false;
    }
  }
}
