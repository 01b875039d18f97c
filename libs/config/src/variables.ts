import type { VariableDocs } from './reference.js';

/**
 * Meanings of the variables more than one service reads (every app's own variables are described
 * beside its schema, in its config.docs.ts). docs/configuration.md is generated from both.
 */
export const SHARED_VARIABLE_DOCS: VariableDocs = {
  NODE_ENV: {
    meaning:
      '`production` (the images set it) makes the service refuse to start with a development, empty, short or placeholder secret, naming the variable; anything else is a development run.',
  },
  TETHER_NATS_URL: {
    meaning: 'NATS servers with JetStream, comma-separated `nats://` (or `tls://`, `ws://`, `wss://`) URLs.',
  },
  TETHER_NAMESPACE: {
    meaning:
      'Prefix of every NATS subject, JetStream stream and Redis key of one deployment; every service and edge of a deployment uses the same one.',
  },
  TETHER_LOG_LEVEL: { meaning: 'Lowest log level written: `error`, `warn`, `log`, `debug` or `verbose`.' },
  TETHER_LOG_FORMAT: {
    meaning: '`json` (one JSON object per line, for log collectors) or `text` (human-readable).',
  },
  TETHER_EDGE_SECRET: {
    meaning:
      'Secret edge tokens are derived from (HMAC): history signs them at enrollment, the router verifies every heartbeat and update with it. Rotating it revokes every edge token (docs/operations.md). At least 16 characters, 32 in production.',
  },
  TETHER_METRICS_PORT: {
    meaning:
      'Ops port serving `/metrics`, `/healthz` and `/readyz` (never the public port): a port number, `0` for an ephemeral one (logged at start), or `off`.',
  },
  TETHER_SHUTDOWN_GRACE_MS: {
    meaning:
      "After SIGTERM, how long the service may take to stop taking work, finish or hand back what it holds and drain NATS before it exits anyway; keep it below the pod's `terminationGracePeriodSeconds` minus the delay and 5 s for the telemetry flush.",
  },
  TETHER_SHUTDOWN_DELAY_MS: {
    meaning:
      'After SIGTERM, how long the service keeps serving while `/readyz` already answers 503, so load balancers and Kubernetes endpoints stop routing to it first (the manifests set 5000).',
  },
  TETHER_TRACE_BACKGROUND_RATIO: {
    meaning:
      'Share of background rounds (heartbeats, reaper ticks, sweeps, compactions) traced, each as a short trace of its own; 0 turns them off, 1 traces every round.',
  },
  OTEL_SERVICE_NAME: { meaning: 'Service name on traces and metrics; default `tether-<app>`.' },
  OTEL_SDK_DISABLED: { meaning: '`true` turns OpenTelemetry off entirely (no traces, empty `/metrics`).' },
  OTEL_TRACES_EXPORTER: {
    meaning:
      'Trace exporter (`otlp`, `console`, `none`); tracing stays off until this or an OTLP endpoint is set.',
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: { meaning: 'OTLP collector base URL; setting it turns tracing on.' },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    meaning: 'OTLP traces URL, when traces go somewhere else than `OTEL_EXPORTER_OTLP_ENDPOINT`.',
  },
  TETHER_NATS_CREDS: {
    meaning:
      'Path of a NATS `.creds` file (user JWT and nkey seed) this process connects with; unset for an open development NATS. `npm run nats:setup` writes one per service (docs/security.md).',
  },
  TETHER_NATS_TLS_CA: {
    meaning: "Path of the CA certificate (PEM) that signed the NATS servers' certificates.",
  },
  TETHER_NATS_TLS_CERT: {
    meaning:
      'Path of a client certificate (PEM) for NATS servers that require one; set together with `TETHER_NATS_TLS_KEY`.',
  },
  TETHER_NATS_TLS_KEY: {
    meaning: "Path of the client certificate's private key (PEM); set together with `TETHER_NATS_TLS_CERT`.",
  },
  TETHER_JETSTREAM_REPLICAS: {
    meaning:
      'Replicas of each JetStream stream a service creates (1 to 5): 1 on a single NATS server, 3 on a production cluster so one server can be lost without losing an acknowledged write. Only shapes a stream that does not exist yet; an existing stream keeps its own (docs/scaling.md).',
  },
  TETHER_SESSIONS_STREAM_MAX_AGE: {
    meaning:
      "Age after which journal rows and lifecycle events leave the `<NS>_SESSIONS` stream (`0`: never; otherwise `90s`, `36h`, `14d`...). History stores rows within seconds, so this is the replay buffer: it must outlast a history outage and any subscriber's absence. Only shapes a stream being created.",
  },
  TETHER_SESSIONS_STREAM_MAX_BYTES: {
    meaning:
      "Size at which the oldest messages leave `<NS>_SESSIONS` (`0`: no limit; bytes or `512MiB`, `64GiB`...). JetStream reserves it on the servers' storage when the stream is created. Only shapes a stream being created.",
  },
  TETHER_SESSIONS_STREAM_STORAGE: {
    meaning:
      '`file` or `memory` storage for `<NS>_SESSIONS` when it is created; `memory` loses the stream when every replica restarts.',
  },
  TETHER_AUDIT_STREAM_MAX_AGE: {
    meaning:
      'Age after which audit records history has not stored yet leave the `<NS>_AUDIT` work queue (`0`: never; `30d`...). Only shapes a stream being created.',
  },
  TETHER_AUDIT_STREAM_MAX_BYTES: {
    meaning:
      'Size at which the oldest unstored audit records leave `<NS>_AUDIT` (`0`: no limit; bytes or `512MiB`...). Only shapes a stream being created.',
  },
  TETHER_AUDIT_STREAM_STORAGE: {
    meaning: '`file` or `memory` storage for `<NS>_AUDIT` when it is created.',
  },
  TETHER_JOURNAL_KEY: {
    meaning:
      'Secret the journal\'s content key is derived from: the router seals every journal row\'s conversation content with it (AES-256-GCM) and history opens it, so JetStream never holds plain text. At least 32 characters, never the development value in production (docs/security.md "Content encryption").',
  },
  TETHER_JOURNAL_PREVIOUS_KEYS: {
    meaning:
      'Comma-separated earlier journal keys that still open rows sealed before a rotation (at most 4); empty by default.',
  },
};
