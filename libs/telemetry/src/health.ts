/** One dependency probe for `/readyz`: resolves when reachable, throws (or times out) when not. */
export type ReadinessCheck = () => Promise<unknown>;

/** A probe slower than this counts as down: /readyz must answer well inside a kubelet timeout. */
export const READINESS_CHECK_TIMEOUT_MS = 2_000;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, 'ok' | 'down'>;
}

function withTimeout(probe: ReadinessCheck): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), READINESS_CHECK_TIMEOUT_MS);
  });
  return Promise.race([probe(), timeout]).finally(() => clearTimeout(timer));
}

/** Runs every check at once; the report names each dependency (never an address or error text). */
export async function readiness(checks: Record<string, ReadinessCheck>): Promise<ReadinessReport> {
  const names = Object.keys(checks);
  const results = await Promise.allSettled(names.map((name) => withTimeout(checks[name] as ReadinessCheck)));
  const report: ReadinessReport = { ready: true, checks: {} };
  results.forEach((result, index) => {
    const ok = result.status === 'fulfilled';
    report.checks[names[index] as string] = ok ? 'ok' : 'down';
    if (!ok) report.ready = false;
  });
  return report;
}

/** The parts of a NATS connection a probe needs (kept structural: telemetry does not depend on NATS). */
export interface NatsProbeTarget {
  isClosed(): boolean;
  flush(): Promise<void>;
}

/** NATS is reachable: the connection is open and the server answers a PING. */
export function natsCheck(nc: NatsProbeTarget): ReadinessCheck {
  return async () => {
    if (nc.isClosed()) throw new Error('closed');
    await nc.flush();
  };
}

/**
 * The public HTTP listener accepts connections. The ops port opens before it (and stays open after
 * it closes), so without this a restarting api would be routed requests it refuses.
 */
export function listeningCheck(server: { readonly listening: boolean }): ReadinessCheck {
  // A rejection, not a throw: readiness() calls every probe before racing them.
  return () => (server.listening ? Promise.resolve() : Promise.reject(new Error('not listening')));
}

/** Redis answers PING. */
export function redisCheck(redis: { ping(): Promise<unknown> }): ReadinessCheck {
  return () => redis.ping();
}

/** Postgres answers `SELECT 1` (through whatever client the app holds). */
export function postgresCheck(select1: () => Promise<unknown>): ReadinessCheck {
  return select1;
}
