import { Logger } from '@nestjs/common';
import { intVar } from '#config';
import type { OpsServer } from './ops-server.js';
import { shutdownTelemetry } from './sdk.js';

/**
 * How long a service may take to stop taking work and finish (or hand back) what it holds, NATS
 * drain included. Kubernetes' default terminationGracePeriodSeconds is 30 s; the manifests give
 * 35 s so that the readiness delay (5 s there) + this + the telemetry flush below all fit.
 */
export const SHUTDOWN_GRACE_DEFAULT_MS = 20_000;
/** Spans still buffered get this long to reach the collector; an unreachable one must not hold the exit. */
export const TELEMETRY_FLUSH_TIMEOUT_MS = 5_000;

/** `TETHER_SHUTDOWN_GRACE_MS` for an app's config schema. */
export const shutdownGraceVar = () => intVar(SHUTDOWN_GRACE_DEFAULT_MS, 100, 10 * 60_000);
/**
 * `TETHER_SHUTDOWN_DELAY_MS`: after SIGTERM the service keeps serving, already answering /readyz
 * with 503, for this long, so load balancers and Kubernetes endpoints stop sending it new work
 * before it stops listening. 0 (the default) outside a cluster; the manifests set 5 s.
 */
export const shutdownDelayVar = () => intVar(0, 0, 60_000);

export interface TerminationOptions {
  /** For the log lines: `api`, `session-router`, ... */
  service: string;
  /** Stops taking work, finishes or hands back what is in flight, drains NATS. Called once. */
  stop: () => Promise<void>;
  graceMs: number;
  delayMs?: number;
  /** Its /readyz turns 503 the moment a signal arrives; closed last. */
  ops?: OpsServer;
  signals?: readonly NodeJS.Signals[];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves `true` when `work` settled in time, `false` when the grace period ran out first. */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The one shutdown every service follows (docs/operations.md): on SIGTERM or SIGINT, /readyz
 * answers 503 at once; after `delayMs` the service stops taking work and finishes or hands back
 * what it holds within `graceMs` (unacked JetStream messages are redelivered elsewhere, an
 * unanswered request is retried by its caller); then telemetry is flushed and the process exits:
 * 0 when everything stopped in time, 1 otherwise.
 */
export function stopOnSignals(options: TerminationOptions): void {
  const log = new Logger('Shutdown');
  let stopping = false;
  const run = async (signal: string): Promise<void> => {
    if (stopping) {
      log.warn(`Received ${signal} again; ${options.service} is already stopping.`);
      return;
    }
    stopping = true;
    options.ops?.drain();
    log.log(`Received ${signal}; ${options.service} is no longer ready and stops taking work.`);
    if (options.delayMs) await sleep(options.delayMs);
    let code = 0;
    try {
      if (await within(options.stop(), options.graceMs)) {
        log.log(`${options.service} finished its in-flight work and drained NATS.`);
      } else {
        code = 1;
        log.error(
          `${options.service} did not stop within ${options.graceMs} ms; exiting, unfinished work is handed back.`,
        );
      }
    } catch (error) {
      code = 1;
      log.error(`${options.service} failed to stop cleanly: ${(error as Error).message}`);
    }
    await within(shutdownTelemetry(), TELEMETRY_FLUSH_TIMEOUT_MS);
    await options.ops?.close();
    process.exit(code);
  };
  for (const signal of options.signals ?? ['SIGTERM', 'SIGINT']) {
    process.on(signal, () => void run(signal));
  }
}
