import { Injectable } from '@nestjs/common';
import {
  actionSpec,
  Limits,
  type RequestMap,
  type RequestName,
  type RequestOf,
  type RouterEdgeAgentRequest,
} from '#contracts';
import { requestService, NatsBus, RpcRemoteError, RpcUnavailableError } from '#messaging';
import { RouterReplicas } from './router-replicas.js';

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

/**
 * A call that may be sent to the routers twice with one effect: a read (presence, an action that
 * changes nothing), or a mutation with the envelope, whose duplicate the router's operation
 * ledger answers as a replay. A mutation without it might be applied twice, so it is never resent.
 */
export function resendable(name: RouterRequest, payload: unknown): boolean {
  if (name === 'routerPresence') return true;
  const request = (payload as RouterEdgeAgentRequest).request;
  const spec = actionSpec(request.action);
  if (!spec) return false;
  return !spec.audited || (spec.operation !== null && request.client_operation_id !== undefined);
}

/** The api's only way out: typed NATS requests to the router and to history. */
@Injectable()
export class ServiceClient {
  constructor(
    private readonly bus: NatsBus,
    private readonly replicas: RouterReplicas,
  ) {}

  /** A router call; one that can be resent is sent again if a router replica is lost meanwhile. */
  router<N extends RouterRequest>(name: N, payload: RequestOf<N>): Promise<RequestMap[N][1]> {
    const timeoutMs = name === 'routerEdgeAgent' ? Limits.API_ROUTER_TIMEOUT_MS : ROUTER_PRESENCE_TIMEOUT_MS;
    const longPoll = isWatch(payload);
    const attempt = (ms: number) =>
      requestService(this.bus.nc, this.bus.subjects, name, payload, { timeoutMs: ms, longPoll });
    return resendable(name, payload) ? this.replicas.call(attempt, timeoutMs) : attempt(timeoutMs);
  }

  history<N extends HistoryRequest>(name: N, payload: RequestOf<N>): Promise<RequestMap[N][1]> {
    return requestService(this.bus.nc, this.bus.subjects, name, payload, {
      timeoutMs: Limits.HISTORY_RPC_TIMEOUT_MS,
    });
  }
}
