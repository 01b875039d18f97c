import { Injectable, Logger } from '@nestjs/common';
import {
  ACTIONS,
  EDGE_AGENT_ACTIONS,
  EDGE_AGENT_RPC_VERSION,
  isEdgeAgentStatus,
  result,
  validateEdgeAgentRequest,
  type ActionSpec,
  type AgentAccess,
  type EdgeAgentRequest,
  type EdgeAgentResult,
} from '#contracts';
import { RpcRemoteError, RpcUnavailableError } from '#messaging';
import {
  AccessNotFoundError,
  ForbiddenError,
  InvalidAgentRequestError,
  UnauthorizedError,
} from '../common/errors.js';
import { Authorizer } from '../common/authorizer.js';
import { ServiceClient } from '../common/service-client.js';
import type { Permission, Principal } from '../auth/principal.js';
import { UserLimits } from '../limits/user-limits.service.js';

/** Internal actions (`snapshot`, `expire`) are Tether's own; a client may only send these. */
const CLIENT_ACTIONS: ReadonlySet<string> = new Set(EDGE_AGENT_ACTIONS);

/**
 * One edge action for one authenticated actor: validate, authorize against history (connector
 * owned, access owned and matching), forward to the router with `actor_id` and `project_root`
 * injected, and for `watch` authorize again before answering.
 */
@Injectable()
export class EdgeAgentsService {
  private readonly log = new Logger(EdgeAgentsService.name);

  constructor(
    private readonly services: ServiceClient,
    private readonly authorizer: Authorizer,
    private readonly limits: UserLimits,
  ) {}

  async handle(principal: Principal, request: EdgeAgentRequest): Promise<EdgeAgentResult> {
    if (!CLIENT_ACTIONS.has(request.action) || !validateEdgeAgentRequest(request).ok) {
      throw new InvalidAgentRequestError();
    }
    // Some actions (the file ones) need a permission of their own besides the route's (reference §5).
    const spec: ActionSpec = ACTIONS[request.action];
    const permission: Permission | null = spec.permission;
    if (permission && !principal.permissions.has(permission)) {
      throw new ForbiddenError(`Actor ${principal.actorId} lacks ${permission}.`);
    }

    // The edge's rate is charged only for calls that name a well-formed edge, before anything
    // downstream (history, router, the edge itself) is asked.
    this.limits.admitEdgeRequest(request.edge_id);
    const access = await this.authorize(principal, request);
    const release =
      request.action === 'watch' ? this.limits.startWatch(principal.actorId, request.edge_id) : undefined;
    let reply: EdgeAgentResult;
    try {
      reply = await this.forward({
        actor_id: principal.actorId,
        request,
        ...(access ? { project_root: access.project } : {}),
      });
    } finally {
      release?.();
    }

    if (spec.reauthorize) {
      // A watch waits and a file chunk moves data: either may outlast the token or the grant, so
      // the caller is authorized again before any of the reply (a file's bytes included) leaves.
      if (Date.now() >= principal.expiresAt)
        throw new UnauthorizedError(`Token expired during ${request.action}.`);
      await this.authorize(principal, request, { fresh: true });
    }
    return reply;
  }

  /**
   * The connector is the actor's and the named access matches: history's answer, or its recent
   * "yes" (common/authorizer.ts). `fresh` asks history whatever it answered before.
   */
  private async authorize(
    principal: Principal,
    request: EdgeAgentRequest,
    options: { fresh?: boolean } = {},
  ): Promise<AgentAccess | undefined> {
    const reply = await this.authorizer.authorize(
      { actorId: principal.actorId, edgeId: request.edge_id, accessId: request.access_id },
      options,
    );
    if (!request.access_id) return undefined;
    const access = reply.access;
    if (!access || access.id !== request.access_id || access.edge_id !== request.edge_id) {
      throw new AccessNotFoundError(`Access ${request.access_id} does not match edge ${request.edge_id}.`);
    }
    if (
      request.action === 'start' &&
      (access.installation_id !== request.installation_id || access.project !== request.project)
    ) {
      throw new AccessNotFoundError(`Access ${access.id} does not match the start request.`);
    }
    return access;
  }

  /** One router round trip. A router that cannot be reached is an edge status, not an error. */
  private async forward(payload: {
    actor_id: string;
    request: EdgeAgentRequest;
    project_root?: string;
  }): Promise<EdgeAgentResult> {
    let reply: EdgeAgentResult;
    try {
      reply = await this.services.router('routerEdgeAgent', payload);
    } catch (error) {
      if (
        error instanceof RpcUnavailableError ||
        (error instanceof RpcRemoteError && error.code === 'unavailable')
      ) {
        this.log.warn(
          `Edge ${payload.request.edge_id} unreachable for ${payload.request.action}: ${error.message}`,
        );
        return result('unavailable');
      }
      throw error;
    }
    if (typeof reply !== 'object' || reply === null) return result('unavailable');
    if (reply.version !== EDGE_AGENT_RPC_VERSION) return result('upgrade_required');
    // Statuses outside the contract's allow-list are not passed on (reference §2.1).
    if (!isEdgeAgentStatus(reply.status)) return result('unavailable');
    return reply;
  }
}
