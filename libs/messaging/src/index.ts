export { encodeJson, decodeJson, MalformedPayloadError } from './codec.js';
export { connectNats } from './nats-connection.js';
export { NatsBus } from './nats-bus.js';
export { NatsSettingsError, natsConnectionOptions } from './nats-connection.js';
export type { NatsConnectOptions } from './nats-connection.js';
export {
  RpcUnavailableError,
  RpcRemoteError,
  RpcReplyTooLargeError,
  requestJson,
  requestService,
} from './rpc-client.js';
export type { RequestOptions } from './rpc-client.js';
export { ServiceError, InvalidPayloadError, RpcErrorFilter } from './rpc-errors.js';
export type { OutageRule } from './rpc-errors.js';
export { NatsTransport, NatsRequestContext } from './nats-transport.js';
export type { NatsTransportOptions } from './nats-transport.js';
export { parsePayload } from './payload.js';
export {
  ensureSessionsStream,
  ensureStream,
  ensureDurableConsumer,
  RetryPolicy,
  sessionsStreamSpec,
  withJetStreamRetry,
  consumeTraced,
  consumeBatchTraced,
} from './jetstream.js';
export { ensureAuditStream, auditStreamSpec } from './audit-stream.js';
export { DurableLoop } from './durable-loop.js';
export { compareStream, describeDifference, streamConfig, StreamConfigError } from './stream-config.js';
export type { StreamDifference, StreamSpec } from './stream-config.js';
export {
  traceHeaders,
  traceContextOf,
  withIncomingTrace,
  withIncomingTraces,
  withSendSpan,
} from './trace-context.js';
export type { IncomingMessage, ProcessOptions, SendOptions } from './trace-context.js';
export { JournalCipher, JournalSealError } from './journal-cipher.js';
export { deriveKey, gcmOpen, gcmSeal, GCM_NONCE_BYTES, GCM_TAG_BYTES } from './aes-gcm.js';
