import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  EDGE_AGENT_RPC_VERSION,
  Limits,
  edgeAgentResultSchema,
  isEdgeAgentStatus,
  result,
  type EdgeAgentRPCRequest,
  type EdgeAgentResult,
  type Subjects,
} from '#contracts';
import {
  MalformedPayloadError,
  NATS_CONNECTION,
  RpcReplyTooLargeError,
  RpcUnavailableError,
  requestJson,
} from '#messaging';
import { EDGE_ID_PATTERN } from './limits.js';
import { SUBJECTS } from './tokens.js';

/**
 * The router's one way to talk to an edge (`edge_agent_v1`, reference §2.1). It never throws:
 * every transport or decoding failure becomes a contract status, so callers only see results.
 */
@Injectable()
export class EdgeRpcClient {
  private readonly log = new Logger(EdgeRpcClient.name);

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SUBJECTS) private readonly subjects: Subjects,
  ) {}

  async call(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const edgeId = rpc.request.edge_id;
    if (!EDGE_ID_PATTERN.test(edgeId)) return result('invalid_request');
    let reply: unknown;
    try {
      reply = await requestJson<unknown>(this.nc, this.subjects.edgeRpc(edgeId), rpc, {
        timeoutMs: Limits.ROUTER_EDGE_RPC_TIMEOUT_MS,
        maxReplyBytes: Limits.RPC_PAYLOAD_LIMIT_BYTES,
      });
    } catch (error) {
      if (error instanceof RpcUnavailableError) return result('unavailable');
      if (error instanceof RpcReplyTooLargeError || error instanceof MalformedPayloadError) {
        this.log.warn(`Edge ${edgeId} sent an unusable reply to ${rpc.request.action}: ${error.message}`);
        return result('unavailable');
      }
      this.log.error(`Edge ${edgeId} call for ${rpc.request.action} failed: ${(error as Error).message}`);
      return result('unavailable');
    }
    return this.check(edgeId, rpc.request.action, reply);
  }

  /** Version first (an old edge may not know our statuses), then the status allow-list, then the shape. */
  private check(edgeId: string, action: string, reply: unknown): EdgeAgentResult {
    if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) {
      this.log.warn(`Edge ${edgeId} answered ${action} with a non-object.`);
      return result('unavailable');
    }
    const { version, status } = reply as { version?: unknown; status?: unknown };
    if (version !== EDGE_AGENT_RPC_VERSION) return result('upgrade_required');
    if (!isEdgeAgentStatus(status)) {
      this.log.warn(`Edge ${edgeId} answered ${action} with a status outside the allow-list.`);
      return result('unavailable');
    }
    const parsed = edgeAgentResultSchema.safeParse(reply);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      this.log.warn(
        `Edge ${edgeId} answered ${action} with an invalid result (${issue ? issue.path.join('.') : 'shape'}).`,
      );
      return result('unavailable');
    }
    return parsed.data;
  }
}
