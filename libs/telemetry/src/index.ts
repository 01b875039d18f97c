export { renderMetrics, prometheusName, METRICS_CONTENT_TYPE } from './reader.js';
export { loadTelemetryConfig, metricsPortVar } from './config.js';
export type { MetricsPort, TelemetryConfig } from './config.js';
export { defaultServiceName } from './service-name.js';
export { JsonLogger, installLogger } from './logger.js';
export {
  METRIC,
  recordHttpRequest,
  recordRequestService,
  recordOutageGrant,
  recordRouterCallsResent,
  recordSseBatch,
  recordWatchAnswer,
  recordNatsRequest,
  recordTurnTiming,
  recordHistoryWrite,
  recordSubmissionsSettled,
  exportSubmissionSettlements,
  registerGauge,
  subjectLabel,
} from './metrics.js';
export type { NatsOutcome, NatsCallKind, TurnTimingMs, GaugeRead } from './metrics.js';
export { STANDARD_METRIC, recordMessagingSend, recordMessagingProcess } from './standard-metrics.js';
export { LATENCY_BUCKETS_S } from './buckets.js';
export { traceBackground } from './background.js';
export { PeriodicTask, PeriodicWorker } from './periodic-task.js';
export type { BackgroundService, PeriodicTaskOptions } from './periodic-task.js';
export { TurnTrace, TURN_ATTR } from './turn-trace.js';
export {
  readiness,
  natsCheck,
  redisCheck,
  postgresCheck,
  listeningCheck,
  READINESS_CHECK_TIMEOUT_MS,
} from './health.js';
export type { ReadinessCheck, ReadinessReport, NatsProbeTarget } from './health.js';
export { startOpsServer, opsResponse } from './ops-server.js';
export type { OpsServer, OpsServerOptions } from './ops-server.js';
export { skipTracingWhen } from './untraced.js';
export { instrumentApiHttp, noteHttpAction, noteRequestService, ACTION_ATTR } from './http-metrics.js';
export type { FastifyLike } from './http-metrics.js';
export {
  stopOnSignals,
  shutdownGraceVar,
  shutdownDelayVar,
  SHUTDOWN_GRACE_DEFAULT_MS,
  TELEMETRY_FLUSH_TIMEOUT_MS,
} from './lifecycle.js';
export type { TerminationOptions } from './lifecycle.js';
export { telemetryEnvSchema } from './config.js';
