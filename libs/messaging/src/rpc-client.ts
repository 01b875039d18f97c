import { errors, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import {
  isRpcError,
  type RequestMap,
  type RequestName,
  type RequestOf,
  type RpcErrorCode,
  type Subjects,
} from '#contracts';
import { recordNatsRequest, subjectLabel, type NatsOutcome } from '#telemetry';
import { decodeJson, encodeJson } from './codec.js';
import { requestMuxOf } from './nats-connection.js';
import { withSendSpan } from './trace-context.js';

/** Nobody answered: no responder subscribed, the call timed out, or the connection is gone. */
export class RpcUnavailableError extends Error {
  constructor(
    readonly subject: string,
    readonly reason: 'no_responders' | 'timeout' | 'disconnected',
  ) {
    super(`Request on ${subject} got no answer (${reason}).`);
    this.name = 'RpcUnavailableError';
  }
}

/** The responder answered with an RpcError. */
export class RpcRemoteError extends Error {
  constructor(
    readonly subject: string,
    readonly code: RpcErrorCode,
    remoteMessage: string,
  ) {
    super(`Request on ${subject} failed with ${code}: ${remoteMessage}`);
    this.name = 'RpcRemoteError';
  }
}

/** The reply was larger than the caller allows (RequestOptions.maxReplyBytes). */
export class RpcReplyTooLargeError extends Error {
  constructor(
    readonly subject: string,
    readonly bytes: number,
  ) {
    super(`Reply on ${subject} is ${bytes} bytes, over the allowed size.`);
    this.name = 'RpcReplyTooLargeError';
  }
}

export interface RequestOptions {
  timeoutMs: number;
  headers?: MsgHdrs;
  /** Refuse (RpcReplyTooLargeError) a reply whose encoded size exceeds this, before decoding it. */
  maxReplyBytes?: number;
  /** A watch: it waits by design, so its latency is recorded apart (`kind="long_poll"`). */
  longPoll?: boolean;
}

function unavailableReason(error: unknown): 'no_responders' | 'timeout' | 'disconnected' | null {
  if (error instanceof errors.RequestError && error.isNoResponders()) return 'no_responders';
  if (error instanceof errors.NoRespondersError) return 'no_responders';
  if (error instanceof errors.TimeoutError) return 'timeout';
  if (error instanceof errors.RequestError && error.cause instanceof errors.TimeoutError) {
    return 'timeout';
  }
  if (error instanceof errors.ClosedConnectionError) return 'disconnected';
  if (error instanceof errors.DrainingConnectionError) return 'disconnected';
  return null;
}

/**
 * One JSON request, mapping transport failures to RpcUnavailableError. The request is a PRODUCER
 * span `send <subject>` whose context rides in the `traceparent` header, and its latency is
 * recorded by subject (`tether.nats.request.duration`, `messaging.client.operation.duration`).
 */
export async function requestJson<T>(
  nc: NatsConnection,
  subject: string,
  payload: unknown,
  options: RequestOptions,
): Promise<T> {
  const label = subjectLabel(subject);
  const body = encodeJson(payload);
  const started = performance.now();
  let outcome: NatsOutcome = 'error';
  let data: Uint8Array;
  try {
    const reply = await withSendSpan(
      subject,
      {
        headers: options.headers,
        bodySize: body.length,
        errorType: (error) => unavailableReason(error) ?? 'error',
      },
      (headers) => {
        const mux = requestMuxOf(nc);
        return mux
          ? mux.request(subject, body, options.timeoutMs, headers)
          : nc.request(subject, body, { timeout: options.timeoutMs, headers });
      },
    );
    data = reply.data;
    outcome = 'ok';
  } catch (error) {
    const reason = unavailableReason(error);
    if (reason) outcome = reason;
    if (reason) throw new RpcUnavailableError(subject, reason);
    throw error;
  } finally {
    recordNatsRequest(
      performance.now() - started,
      label,
      outcome,
      options.longPoll ? 'long_poll' : 'request',
    );
  }
  if (options.maxReplyBytes !== undefined && data.length > options.maxReplyBytes) {
    throw new RpcReplyTooLargeError(subject, data.length);
  }
  return decodeJson<T>(data, subject);
}

/** A typed request to one of Tether's services; an RpcError reply is thrown as RpcRemoteError. */
export async function requestService<N extends RequestName>(
  nc: NatsConnection,
  subjects: Subjects,
  name: N,
  payload: RequestOf<N>,
  options: RequestOptions,
): Promise<RequestMap[N][1]> {
  const subject = subjects.requestSubject(name, payload);
  const reply = await requestJson<unknown>(nc, subject, payload, options);
  if (isRpcError(reply)) throw new RpcRemoteError(subject, reply.error.code, reply.error.message);
  return reply as RequestMap[N][1];
}
