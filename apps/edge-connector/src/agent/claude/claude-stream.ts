// Claude Code's stream-json protocol over a child's stdio: one JSON object per line each way.
// Conversation messages (`system`, `assistant`, `user`, `result`, `stream_event`) and permission
// questions (`control_request` from the CLI) share the inbound stream; the edge's own control
// requests (initialize, interrupt, set_model) are answered by `control_response` lines.
import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { OUTGOING_CONTROLS_MAX, STREAM_EVENT_QUEUE_MAX, STREAM_FRAME_MAX_BYTES } from './claude-limits.js';

export type JsonObject = Record<string, unknown>;

/** Why the stream stopped; the session turns it into a `closed` event. */
export type StreamCloseReason =
  | 'stream_ended'
  | 'frame_too_large'
  | 'invalid_frame'
  | 'event_queue_overflow'
  | 'write_failed'
  | 'foreign_session'
  | 'closed_by_client';

/** A control request the CLI refused; its message stays inside the driver. */
export class ControlRejectedError extends Error {
  constructor(readonly subtype: string) {
    super('agent rejected request');
    this.name = 'ControlRejectedError';
  }
}

/** The control request could not be made or answered (closed, timed out, too many in flight). */
export class ControlUnavailableError extends Error {
  constructor(
    readonly reason: 'closed' | 'timeout' | 'too_many_controls',
    readonly subtype: string,
  ) {
    super(`agent control ${subtype} failed: ${reason}`);
    this.name = 'ControlUnavailableError';
  }
}

interface PendingControl {
  subtype: string;
  resolve: (response: JsonObject) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export interface ClaudeStreamOptions {
  input: Readable;
  output: Writable;
  /** Every inbound message except answers to our own controls, in order. */
  onMessage: (message: JsonObject) => void;
  /** Called once when the stream stops for any reason. */
  onClose: (reason: StreamCloseReason) => void;
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export class ClaudeStream {
  private readonly pending = new Map<string, PendingControl>();
  private readonly queue: JsonObject[] = [];
  private draining = false;
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private closedReason: StreamCloseReason | undefined;

  constructor(private readonly options: ClaudeStreamOptions) {
    options.input.on('data', (chunk: Buffer) => this.onData(chunk));
    options.input.on('end', () => this.close('stream_ended'));
    options.input.on('error', () => this.close('stream_ended'));
    options.output.on('error', () => this.close('write_failed'));
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  /** Sends a control request and resolves with the CLI's `response` object. */
  control(request: JsonObject & { subtype: string }, timeoutMs: number): Promise<JsonObject> {
    const { subtype } = request;
    if (this.closed) return Promise.reject(new ControlUnavailableError('closed', subtype));
    if (this.pending.size >= OUTGOING_CONTROLS_MAX) {
      return Promise.reject(new ControlUnavailableError('too_many_controls', subtype));
    }
    const id = randomUUID();
    return new Promise<JsonObject>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ControlUnavailableError('timeout', subtype));
      }, timeoutMs);
      this.pending.set(id, { subtype, resolve, reject, timer });
      if (!this.write({ type: 'control_request', request_id: id, request })) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new ControlUnavailableError('closed', subtype));
      }
    });
  }

  /** Answers a control request of the CLI (a permission question). */
  respond(requestId: string, response: JsonObject): boolean {
    return this.write({
      type: 'control_response',
      response: { subtype: 'success', request_id: requestId, response },
    });
  }

  /** Refuses a control request of the CLI that this client does not serve. */
  respondError(requestId: string, error: string): boolean {
    return this.write({
      type: 'control_response',
      response: { subtype: 'error', request_id: requestId, error },
    });
  }

  /** Writes one user message; resolves once the line is handed to the pipe. */
  sendUser(text: string): Promise<boolean> {
    return new Promise((resolve) => {
      const message = { type: 'user', message: { role: 'user', content: [{ type: 'text', text }] } };
      if (!this.write(message, (error) => resolve(!error))) resolve(false);
    });
  }

  close(reason: StreamCloseReason): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    this.buffered = [];
    this.queue.length = 0;
    for (const [id, control] of this.pending) {
      clearTimeout(control.timer);
      control.reject(new ControlUnavailableError('closed', control.subtype));
      this.pending.delete(id);
    }
    this.options.onClose(reason);
  }

  private write(message: JsonObject, done?: (error?: Error | null) => void): boolean {
    if (this.closed) return false;
    const line = JSON.stringify(message);
    if (Buffer.byteLength(line) > STREAM_FRAME_MAX_BYTES) return false;
    try {
      this.options.output.write(`${line}\n`, done);
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
      if (this.bufferedBytes + piece.length > STREAM_FRAME_MAX_BYTES) {
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
    if (this.bufferedBytes + rest.length > STREAM_FRAME_MAX_BYTES) {
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
    if (!isObject(message) || typeof message.type !== 'string') {
      this.close('invalid_frame');
      return;
    }
    if (message.type === 'control_response') {
      this.onControlResponse(message.response);
      return;
    }
    this.enqueue(message);
  }

  private onControlResponse(response: unknown): void {
    if (!isObject(response) || typeof response.request_id !== 'string') return;
    const control = this.pending.get(response.request_id);
    if (!control) return; // A late answer after a timeout.
    this.pending.delete(response.request_id);
    clearTimeout(control.timer);
    if (response.subtype === 'success') {
      control.resolve(isObject(response.response) ? response.response : {});
    } else {
      control.reject(new ControlRejectedError(control.subtype));
    }
  }

  private enqueue(message: JsonObject): void {
    // The reference closes rather than drops: a lost event would leave a session lying about its state.
    if (this.queue.length >= STREAM_EVENT_QUEUE_MAX) {
      this.close('event_queue_overflow');
      return;
    }
    this.queue.push(message);
    if (this.draining) return;
    this.draining = true;
    while (!this.closed && this.queue.length > 0) {
      const next = this.queue.shift()!;
      try {
        this.options.onMessage(next);
      } catch {
        // The consumer guards itself; a throw must not stop the stream.
      }
    }
    this.draining = false;
  }
}
