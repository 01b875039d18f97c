// JSON-lines JSON-RPC over a child's stdio, as the Codex app-server speaks it: one object per
// line, no "jsonrpc" field, server→client requests share the stream with notifications.
import type { Readable, Writable } from 'node:stream';
import {
  isJsonObject,
  type JsonObject,
  JsonLinesChannel,
  type LineCloseReason,
  parseObjectLine,
} from '../stdio-lines.js';
import { AgentCallError } from '../agent-call.js';
import { RPC_EVENT_QUEUE_MAX, RPC_FRAME_MAX_BYTES, RPC_PENDING_CALLS_MAX } from './codex-limits.js';

export type RequestId = string | number;
export type { JsonObject };

export type InboundMessage =
  | { kind: 'notification'; method: string; params: JsonObject }
  | { kind: 'request'; id: RequestId; method: string; params: JsonObject };

/** Why the connection stopped; the session turns it into a `closed` event. */
export type CloseReason = LineCloseReason;

export interface JsonRpcConnectionOptions {
  input: Readable;
  output: Writable;
  /** Every notification and server request, in order. May return a promise to hold the queue. */
  onMessage: (message: InboundMessage) => void | Promise<void>;
  /** Called once when the connection stops for any reason. */
  onClose: (reason: CloseReason) => void;
}

const isRequestId = (value: unknown): value is RequestId =>
  typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));

export class JsonRpcConnection extends JsonLinesChannel<InboundMessage, number, CloseReason> {
  private nextId = 1;

  constructor(options: JsonRpcConnectionOptions) {
    super({
      input: options.input,
      output: options.output,
      frameMaxBytes: RPC_FRAME_MAX_BYTES,
      queueMax: RPC_EVENT_QUEUE_MAX,
      consume: (message) => options.onMessage(message),
      onClose: (reason) => options.onClose(reason),
    });
  }

  get pendingCalls(): number {
    return this.pending.size;
  }

  call<T>(method: string, params: JsonObject, timeoutMs: number): Promise<T> {
    if (this.closed) return Promise.reject(new AgentCallError('closed', method));
    if (this.pending.size >= RPC_PENDING_CALLS_MAX) {
      return Promise.reject(new AgentCallError('too_many_calls', method));
    }
    const id = this.nextId++;
    return this.pending.open(id, method, timeoutMs, () => this.write({ id, method, params })) as Promise<T>;
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

  protected onLine(line: Buffer): void {
    const message = parseObjectLine(line);
    if (message === 'blank') return;
    if (message === 'invalid') {
      this.close('invalid_frame');
      return;
    }
    const { id, method } = message;
    if (typeof method === 'string') {
      const params = isJsonObject(message.params) ? message.params : {};
      if (id === undefined) this.queue.push({ kind: 'notification', method, params });
      else if (isRequestId(id)) this.queue.push({ kind: 'request', id, method, params });
      else this.close('invalid_frame');
      return;
    }
    if (typeof id !== 'number') return; // An answer to nothing we sent: ignore.
    const call = this.pending.take(id);
    if (!call) return; // Late answer after a timeout.
    if (message.error !== undefined) {
      const code =
        isJsonObject(message.error) && typeof message.error.code === 'number'
          ? message.error.code
          : undefined;
      call.reject(new AgentCallError('rejected', call.label, code));
    } else {
      call.resolve(message.result);
    }
  }
}
