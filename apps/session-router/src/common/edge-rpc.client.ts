import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  EDGE_AGENT_RPC_VERSION,
  Limits,
  edgeRpcResultSchema,
  isEdgeAgentStatus,
  result,
  type EdgeAgentRPCRequest,
  type EdgeAgentResult,
} from '#contracts';
import {
  MalformedPayloadError,
  RpcReplyTooLargeError,
  RpcUnavailableError,
  requestJson,
  NatsBus,
} from '#messaging';
import type { RouterConfig } from '../config.js';
import { EdgeLiveness } from './edge-liveness.js';
import { EDGE_ID_PATTERN } from './limits.js';
import { ROUTER_CONFIG } from './tokens.js';

/**
 * What became of an edge call, as far as the router can tell:
 * - `answered`: the edge answered with a readable result (its status is first-hand);
 * - `not_delivered`: nothing was published, or nobody listened (no responders): the edge never
 *   saw the request;
 * - `unconfirmed`: the request was published and then timed out, the connection dropped, or the
 *   answer was unreadable: the edge may have acted on it.
 */
export type EdgeDelivery = 'answered' | 'not_delivered' | 'unconfirmed';

/** An edge call's result and what became of the request. */
export interface EdgeReply {
  result: EdgeAgentResult;
  delivery: EdgeDelivery;
}

/** What became of an edge call the router never made (refused before the edge was asked). */
export function notDelivered(reply: EdgeAgentResult): EdgeReply {
  return { result: reply, delivery: 'not_delivered' };
}

/** What the mutation ledger's dispatch of an operation adds to its one edge call. */
export interface DispatchOptions {
  /**
   * Runs right before the request is published: the last moment the effect surely has not
   * happened. Throwing (or resolving false) stops the call, which then answers `unavailable`.
   */
  beforePublish?: () => Promise<boolean>;
  /**
   * The operation id the edge records the call under (`dispatch_id`), so a second dispatch of it
   * answers the first outcome and the reconciler can ask what became of a send.
   */
  dispatchId?: string;
}

/** What a call resolves to when its edge is found offline before it answers. */
const EDGE_OFFLINE = Symbol('edge offline');

/**
 * The router's one way to talk to an edge (`edge_agent_v1`, reference §2.1). It never throws:
 * every transport or decoding failure becomes a contract status, so callers only see results.
 */
@Injectable()
export class EdgeRpcClient {
  private readonly log = new Logger(EdgeRpcClient.name);
  private readonly timeoutMs: number;

  constructor(
    private readonly bus: NatsBus,
    @Inject(ROUTER_CONFIG) config: RouterConfig,
    private readonly liveness: EdgeLiveness,
  ) {
    this.timeoutMs = config.edgeRpcTimeoutMs;
  }

  /** The edge's result and what became of the request (`options` only for an operation's dispatch). */
  async call(rpc: EdgeAgentRPCRequest, options: DispatchOptions = {}): Promise<EdgeReply> {
    const sent = options.dispatchId ? { ...rpc, dispatch_id: options.dispatchId } : rpc;
    return this.deliver(sent, options.beforePublish);
  }

  /** The edge's result alone, for a call whose delivery nobody settles on. */
  async ask(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    return (await this.deliver(rpc)).result;
  }

  private async deliver(
    rpc: EdgeAgentRPCRequest,
    beforePublish?: () => Promise<boolean>,
  ): Promise<EdgeReply> {
    const edgeId = rpc.request.edge_id;
    if (!EDGE_ID_PATTERN.test(edgeId))
      return { result: result('invalid_request'), delivery: 'not_delivered' };
    if (beforePublish) {
      const proceed = await beforePublish().catch((error: unknown) => {
        this.log.warn(`Dispatch of ${rpc.request.action} not started: ${(error as Error).message}`);
        return false;
      });
      if (!proceed) return { result: result('unavailable'), delivery: 'not_delivered' };
    }
    // An edge just found dead or hung is not asked again: the answer would be the same, later.
    if (await this.liveness.isKnownOffline(edgeId)) {
      return { result: result('unavailable'), delivery: 'not_delivered' };
    }
    let reply: unknown;
    let untrack = (): void => {};
    try {
      const offline = new Promise<typeof EDGE_OFFLINE>((resolve) => {
        untrack = this.liveness.track(edgeId, () => resolve(EDGE_OFFLINE));
      });
      const request = requestJson<unknown>(this.bus.nc, this.bus.subjects.edgeRpc(edgeId), rpc, {
        timeoutMs: this.timeoutMs,
        maxReplyBytes: Limits.RPC_PAYLOAD_LIMIT_BYTES,
      });
      // The request goes on until its timeout when the edge is found offline first; nobody reads it.
      request.catch(() => undefined);
      reply = await Promise.race([request, offline]);
      if (reply === EDGE_OFFLINE) {
        this.log.warn(`Edge ${edgeId} went offline while ${rpc.request.action} waited for it.`);
        return { result: result('unavailable'), delivery: 'unconfirmed' };
      }
    } catch (error) {
      if (error instanceof RpcUnavailableError) {
        // No responders: the edge never got it. A timeout or a dropped connection: it may have.
        const delivery = error.reason === 'no_responders' ? 'not_delivered' : 'unconfirmed';
        return { result: result('unavailable'), delivery };
      }
      if (error instanceof RpcReplyTooLargeError || error instanceof MalformedPayloadError) {
        this.log.warn(`Edge ${edgeId} sent an unusable reply to ${rpc.request.action}: ${error.message}`);
        return { result: result('unavailable'), delivery: 'unconfirmed' };
      }
      this.log.error(`Edge ${edgeId} call for ${rpc.request.action} failed: ${(error as Error).message}`);
      return { result: result('unavailable'), delivery: 'unconfirmed' };
    } finally {
      untrack();
    }
    const checked = this.check(edgeId, rpc.request.action, reply);
    // An answer outside the contract is no first-hand refusal: the edge may have acted.
    return { result: checked.result, delivery: checked.readable ? 'answered' : 'unconfirmed' };
  }

  /** Version first (an old edge may not know our statuses), then the status allow-list, then the shape. */
  private check(
    edgeId: string,
    action: string,
    reply: unknown,
  ): { result: EdgeAgentResult; readable: boolean } {
    if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) {
      this.log.warn(`Edge ${edgeId} answered ${action} with a non-object.`);
      return { result: result('unavailable'), readable: false };
    }
    const { version, status } = reply as { version?: unknown; status?: unknown };
    // Another contract version refuses what it cannot read: a first-hand answer.
    if (version !== EDGE_AGENT_RPC_VERSION) return { result: result('upgrade_required'), readable: true };
    if (!isEdgeAgentStatus(status)) {
      this.log.warn(`Edge ${edgeId} answered ${action} with a status outside the allow-list.`);
      return { result: result('unavailable'), readable: false };
    }
    const parsed = edgeRpcResultSchema.safeParse(reply);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      this.log.warn(
        `Edge ${edgeId} answered ${action} with an invalid result (${issue ? issue.path.join('.') : 'shape'}).`,
      );
      return { result: result('unavailable'), readable: false };
    }
    return { result: parsed.data, readable: true };
  }
}
