// A call to the routers that is sent again when a router replica is lost while it is in flight:
// the lost replica may have held it, and nothing else would answer it before its timeout.
import { RpcUnavailableError } from '#messaging';

/** One call in flight that may be sent again. */
export interface ResendableCall {
  /** When it was first sent (the registry's clock). */
  readonly startedAt: number;
  /** Sends it again, unless it settled, was resent enough, or is nearly out of time; true if sent. */
  resend(): boolean;
}

/** A call is sent again at most this many times: a second loss during one call is already rare. */
const MAX_RESENDS = 2;
/** A resend needs at least this much of the call's time left to be worth making. */
const MIN_RESEND_MS = 1_000;

/**
 * Runs `attempt` (given the time it may take) and registers the call in `calls`, where a lost
 * replica's resend finds it; each resend runs `attempt` again within the first one's deadline.
 * The first answer of any attempt is the call's. An attempt that timed out fails the call only
 * when no other attempt is still waiting; every other failure (an error reply, no responder at
 * all, our own connection gone) fails it at once, since another attempt would meet the same.
 */
export function callWithResends<T>(
  attempt: (timeoutMs: number) => Promise<T>,
  timeoutMs: number,
  calls: Set<ResendableCall>,
  now: () => number = () => performance.now(),
): Promise<T> {
  const startedAt = now();
  const deadline = startedAt + timeoutMs;
  return new Promise<T>((resolve, reject) => {
    let waiting = 0;
    let resends = 0;
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      calls.delete(call);
      settle();
    };
    const start = (ms: number) => {
      waiting += 1;
      attempt(ms).then(
        (value) => finish(() => resolve(value)),
        (error: unknown) => {
          waiting -= 1;
          const timedOut = error instanceof RpcUnavailableError && error.reason === 'timeout';
          if (timedOut && waiting > 0) return;
          finish(() => reject(error));
        },
      );
    };
    const call: ResendableCall = {
      startedAt,
      resend: () => {
        const left = deadline - now();
        if (settled || resends >= MAX_RESENDS || left < MIN_RESEND_MS) return false;
        resends += 1;
        start(left);
        return true;
      },
    };
    calls.add(call);
    start(timeoutMs);
  });
}
