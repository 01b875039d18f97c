// Claude Code's stream-json protocol over a child's stdio: one JSON object per line each way.
// Conversation messages (`system`, `assistant`, `user`, `result`, `stream_event`) and permission
// questions (`control_request` from the CLI) share the inbound stream; the edge's own control
// requests (initialize, interrupt, set_model) are answered by `control_response` lines.
import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import {
  isJsonObject,
  type JsonObject,
  JsonLinesChannel,
  type LineCloseReason,
  parseObjectLine,
} from '../stdio-lines.js';
import { AgentCallError } from '../agent-call.js';
import { OUTGOING_CONTROLS_MAX, STREAM_EVENT_QUEUE_MAX, STREAM_FRAME_MAX_BYTES } from './claude-limits.js';

export type { JsonObject };

/** Why the stream stopped; the session turns it into a `closed` event. */
export type StreamCloseReason = LineCloseReason | 'foreign_session';

export interface ClaudeStreamOptions {
  input: Readable;
  output: Writable;
  /** Every inbound message except answers to our own controls, in order. */
  onMessage: (message: JsonObject) => void;
  /** Called once when the stream stops for any reason. */
  onClose: (reason: StreamCloseReason) => void;
}

export class ClaudeStream extends JsonLinesChannel<JsonObject, string, StreamCloseReason> {
  constructor(options: ClaudeStreamOptions) {
    super({
      input: options.input,
      output: options.output,
      frameMaxBytes: STREAM_FRAME_MAX_BYTES,
      queueMax: STREAM_EVENT_QUEUE_MAX,
      // Wrapped so the consumer's result never holds the queue: it is consumed synchronously.
      consume: (message) => {
        options.onMessage(message);
      },
      onClose: (reason) => options.onClose(reason),
    });
  }

  /** Sends a control request and resolves with the CLI's `response` object. */
  control(request: JsonObject & { subtype: string }, timeoutMs: number): Promise<JsonObject> {
    const { subtype } = request;
    if (this.closed) return Promise.reject(new AgentCallError('closed', subtype));
    if (this.pending.size >= OUTGOING_CONTROLS_MAX) {
      return Promise.reject(new AgentCallError('too_many_calls', subtype));
    }
    const id = randomUUID();
    const send = (): boolean => this.write({ type: 'control_request', request_id: id, request });
    return this.pending.open(id, subtype, timeoutMs, send) as Promise<JsonObject>;
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

  protected onLine(line: Buffer): void {
    const message = parseObjectLine(line);
    if (message === 'blank') return;
    if (message === 'invalid' || typeof message.type !== 'string') {
      this.close('invalid_frame');
      return;
    }
    if (message.type === 'control_response') {
      this.onControlResponse(message.response);
      return;
    }
    this.queue.push(message);
  }

  private onControlResponse(response: unknown): void {
    if (!isJsonObject(response) || typeof response.request_id !== 'string') return;
    const control = this.pending.take(response.request_id);
    if (!control) return; // A late answer after a timeout.
    if (response.subtype === 'success') {
      control.resolve(isJsonObject(response.response) ? response.response : {});
    } else {
      control.reject(new AgentCallError('rejected', control.label));
    }
  }
}
