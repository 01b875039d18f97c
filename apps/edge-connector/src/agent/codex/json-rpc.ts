// JSON-lines JSON-RPC over a child's stdio, as the Codex app-server speaks it: one object per
// line, no "jsonrpc" field, server→client requests share the stream with notifications.
import type { Readable, Writable } from 'node:stream';
import { RPC_EVENT_QUEUE_MAX, RPC_FRAME_MAX_BYTES, RPC_PENDING_CALLS_MAX } from './codex-limits.js';

export type RequestId = string | number;
export type JsonObject = Record<string, unknown>;

export type InboundMessage =
  | { kind: 'notification'; method: string; params: JsonObject }
  | { kind: 'request'; id: RequestId; method: string; params: JsonObject };

/** Why the connection stopped; the session turns it into a `closed` event. */
export type CloseReason =
  | 'stream_ended'
  | 'frame_too_large'
  | 'invalid_frame'
  | 'event_queue_overflow'
  | 'write_failed'
  | 'closed_by_client';

/** A JSON-RPC `error` answer. The native message stays inside: callers only see a generic text. */
export class RpcRejectedError extends Error {
  constructor(
    readonly method: string,
    readonly code: number | undefined,
  ) {
    super('agent rejected request');
    this.name = 'RpcRejectedError';
  }
}

/** The call could not be made or answered (closed, timed out, too many in flight). */
export class RpcUnavailableError extends Error {
  constructor(
    readonly reason: 'closed' | 'timeout' | 'too_many_calls',
    readonly method: string,
  ) {
    super(`agent call ${method} failed: ${reason}`);
    this.name = 'RpcUnavailableError';
  }
}

interface PendingCall {
  method: string;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export interface JsonRpcConnectionOptions {
  input: Readable;
  output: Writable;
  /** Every notification and server request, in order. May return a promise to hold the queue. */
  onMessage: (message: InboundMessage) => void | Promise<void>;
  /** Called once when the connection stops for any reason. */
  onClose: (reason: CloseReason) => void;
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isRequestId = (value: unknown): value is RequestId =>
  typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));

export class JsonRpcConnection {
  private nextId = 1;
  private readonly pending = new Map<number, PendingCall>();
  private readonly queue: InboundMessage[] = [];
  private draining = false;
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private closedReason: CloseReason | undefined;

  constructor(private readonly options: JsonRpcConnectionOptions) {
    options.input.on('data', (chunk: Buffer) => this.onData(chunk));
    options.input.on('end', () => this.close('stream_ended'));
    options.input.on('error', () => this.close('stream_ended'));
    options.output.on('error', () => this.close('write_failed'));
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  get pendingCalls(): number {
    return this.pending.size;
  }

  call<T>(method: string, params: JsonObject, timeoutMs: number): Promise<T> {
    if (this.closed) return Promise.reject(new RpcUnavailableError('closed', method));
    if (this.pending.size >= RPC_PENDING_CALLS_MAX) {
      return Promise.reject(new RpcUnavailableError('too_many_calls', method));
    }
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RpcUnavailableError('timeout', method));
      }, timeoutMs);
      this.pending.set(id, { method, resolve: resolve as (r: unknown) => void, reject, timer });
      if (!this.write({ id, method, params })) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new RpcUnavailableError('closed', method));
      }
    });
  }

  notify(method: string, params?: JsonObject): boolean {
    return this.write(params === undefined ? { method } : { method, params });
  }

  /** Answers a server request. */
  respond(id: RequestId, result: JsonObject): boolean {
    return this.write({ id, result });
  }

  /** Refuses a server request the client does not support. */
  respondError(id: RequestId, code: number, message: string): boolean {
    return this.write({ id, error: { code, message } });
  }

  close(reason: CloseReason): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    this.buffered = [];
    this.queue.length = 0;
    for (const [id, call] of this.pending) {
      clearTimeout(call.timer);
      call.reject(new RpcUnavailableError('closed', call.method));
      this.pending.delete(id);
    }
    this.options.onClose(reason);
  }

  private write(message: JsonObject): boolean {
    if (this.closed) return false;
    const line = JSON.stringify(message);
    if (Buffer.byteLength(line) > RPC_FRAME_MAX_BYTES) return false;
    try {
      this.options.output.write(`${line}\n`);
      return true;
    } catch {
      this.close('write_failed');
      return false;
    }
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    while (!this.closed) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) break;
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      if (this.bufferedBytes + piece.length > RPC_FRAME_MAX_BYTES) {
        this.close('frame_too_large');
        return;
      }
      const line = this.bufferedBytes === 0 ? piece : Buffer.concat([...this.buffered, piece]);
      this.buffered = [];
      this.bufferedBytes = 0;
      this.onLine(line.toString('utf8'));
    }
    if (this.closed || start >= chunk.length) return;
    const rest = chunk.subarray(start);
    if (this.bufferedBytes + rest.length > RPC_FRAME_MAX_BYTES) {
      this.close('frame_too_large');
      return;
    }
    this.buffered.push(Buffer.from(rest));
    this.bufferedBytes += rest.length;
  }

  private onLine(line: string): void {
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.close('invalid_frame');
      return;
    }
    if (!isObject(message)) {
      this.close('invalid_frame');
      return;
    }
    const { id, method } = message;
    if (typeof method === 'string') {
      const params = isObject(message.params) ? message.params : {};
      if (id === undefined) this.enqueue({ kind: 'notification', method, params });
      else if (isRequestId(id)) this.enqueue({ kind: 'request', id, method, params });
      else this.close('invalid_frame');
      return;
    }
    if (typeof id !== 'number') return; // An answer to nothing we sent: ignore.
    const call = this.pending.get(id);
    if (!call) return; // Late answer after a timeout.
    this.pending.delete(id);
    clearTimeout(call.timer);
    if (message.error !== undefined) {
      const code =
        isObject(message.error) && typeof message.error.code === 'number' ? message.error.code : undefined;
      call.reject(new RpcRejectedError(call.method, code));
    } else {
      call.resolve(message.result);
    }
  }

  private enqueue(message: InboundMessage): void {
    // The reference closes rather than drops: a lost event would leave a session lying about its state.
    if (this.queue.length >= RPC_EVENT_QUEUE_MAX) {
      this.close('event_queue_overflow');
      return;
    }
    this.queue.push(message);
    this.drain();
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    while (!this.closed && this.queue.length > 0) {
      const message = this.queue.shift()!;
      let pending: void | Promise<void>;
      try {
        pending = this.options.onMessage(message);
      } catch {
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
