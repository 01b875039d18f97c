import { Injectable } from '@nestjs/common';
import { Limits, type RequestMap, type RequestName, type RequestOf } from '#contracts';
import { requestService, NatsBus, RpcRemoteError, RpcUnavailableError } from '#messaging';

type RouterRequest = Extract<RequestName, 'routerEdgeAgent' | 'routerPresence'>;
type HistoryRequest = Extract<RequestName, `history${string}`>;

/**
 * Presence is a read of the router's Redis state, as cheap as history's database reads, so it
 * gets the same bound rather than the edge action's long one.
 */
const ROUTER_PRESENCE_TIMEOUT_MS = Limits.HISTORY_RPC_TIMEOUT_MS;

/** A watch waits up to WATCH_WAIT_MS by design: its latency is kept apart from the others'. */
function isWatch(payload: unknown): boolean {
  const request = (payload as { request?: { action?: unknown } }).request;
  return request?.action === 'watch';
}

/**
 * The service did not answer at all (no responder, a timeout, or its own dependency unreachable):
 * a failure to retry, never a "no".
 */
export function isUnreachable(error: unknown): boolean {
  return (
    error instanceof RpcUnavailableError || (error instanceof RpcRemoteError && error.code === 'unavailable')
  );
}

/** The api's only way out: typed NATS requests to the router and to history. */
@Injectable()
export class ServiceClient {
  constructor(private readonly bus: NatsBus) {}

  router<N extends RouterRequest>(name: N, payload: RequestOf<N>): Promise<RequestMap[N][1]> {
    const timeoutMs = name === 'routerEdgeAgent' ? Limits.API_ROUTER_TIMEOUT_MS : ROUTER_PRESENCE_TIMEOUT_MS;
    return requestService(this.bus.nc, this.bus.subjects, name, payload, {
      timeoutMs,
      longPoll: isWatch(payload),
    });
  }

  history<N extends HistoryRequest>(name: N, payload: RequestOf<N>): Promise<RequestMap[N][1]> {
    return requestService(this.bus.nc, this.bus.subjects, name, payload, {
      timeoutMs: Limits.HISTORY_RPC_TIMEOUT_MS,
    });
  }
}
