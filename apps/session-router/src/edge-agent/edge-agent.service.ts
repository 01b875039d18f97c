import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  EDGE_AGENT_RPC_VERSION,
  isOperationAction,
  Limits,
  result,
  type EdgeAgentRequest,
  type EdgeAgentRPCRequest,
  type EdgeAgentResult,
  type RouterEdgeAgentRequest,
  type Subjects,
} from '#contracts';
import { NATS_CONNECTION, requestService } from '#messaging';
import { EdgeRpcClient } from '../common/edge-rpc.client.js';
import { SUBJECTS } from '../common/tokens.js';
import { LeasesService } from '../leases/leases.service.js';
import { OperationsService } from '../operations/operations.service.js';
import { withoutEnvelope } from '../operations/operation-rules.js';
import { WatchService } from '../watch/watch.service.js';
import { historyPage, mergeSessions } from './sessions-merge.js';
import { StoredSessionsService } from './stored-sessions.service.js';

/** Edge statuses meaning the edge could not be asked; history still answers for it. */
const OFFLINE_STATUSES = new Set<EdgeAgentResult['status']>(['unavailable', 'upgrade_required']);

/** Routes one authorized action to its edge, with the router's own parts (watch, sessions, leases). */
@Injectable()
export class EdgeAgentService {
  private readonly log = new Logger(EdgeAgentService.name);

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SUBJECTS) private readonly subjects: Subjects,
    private readonly edge: EdgeRpcClient,
    private readonly watcher: WatchService,
    private readonly leases: LeasesService,
    private readonly stored: StoredSessionsService,
    private readonly operations: OperationsService,
  ) {}

  async route(command: RouterEdgeAgentRequest): Promise<EdgeAgentResult> {
    const { request } = command;
    // `expire` is the reaper's own action; nobody outside the router may send it.
    if (request.action === 'expire') return result('invalid_request');
    // The mutation envelope: admitted, run once and replayed by the operation ledger.
    if (isOperationAction(request.action) && OperationsService.applies(request)) {
      return this.operations.route(command, request.action, (stripped) => this.forward(command, stripped));
    }
    const reply = await this.forward(command, withoutEnvelope(request));
    await this.operations.noteRuntime(command, reply);
    return reply;
  }

  /** The request's path to its edge and the router's own parts, envelope already removed. */
  private async forward(
    command: RouterEdgeAgentRequest,
    request: EdgeAgentRequest,
  ): Promise<EdgeAgentResult> {
    const rpc: EdgeAgentRPCRequest = {
      version: EDGE_AGENT_RPC_VERSION,
      actor_id: command.actor_id,
      request,
      ...(command.project_root !== undefined ? { project_root: command.project_root } : {}),
    };
    // The renewal runs beside the edge call, off the critical path of the reply.
    const renewal = this.leases.touch(command.actor_id, request);
    const reply = await this.dispatch(rpc);
    await renewal;
    // `start` names its session only in the reply.
    if (request.action === 'start' && reply.status === 'ok' && reply.session_id) {
      await this.leases.touch(command.actor_id, request, reply.session_id);
    }
    return this.stored.overlayTitle(rpc, reply);
  }

  private async dispatch(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    switch (rpc.request.action) {
      case 'watch':
        return this.stored.withOfflineFallback(rpc, await this.watcher.watch(rpc));
      case 'poll':
      case 'stop':
        return this.stored.withOfflineFallback(rpc, await this.edge.call(rpc));
      case 'sessions':
        return this.sessions(rpc);
      case 'resume':
        return this.stored.resume(rpc);
      case 'send':
        return this.stored.send(rpc);
      case 'rename':
        return this.stored.rename(rpc);
      case 'delete':
        return this.stored.delete(rpc);
      case 'discard':
        return this.stored.discard(rpc);
      case 'transcript':
        return this.stored.transcript(rpc);
      default:
        return this.edge.call(rpc);
    }
  }

  private async sessions(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const { access_id: accessId, edge_id: edgeId } = rpc.request;
    if (!accessId) return this.edge.call(rpc);
    const page = historyPage(rpc.request.history_page);
    const [live, stored] = await Promise.all([
      this.edge.call(rpc),
      requestService(
        this.nc,
        this.subjects,
        'historySessions',
        { actor_id: rpc.actor_id, access_id: accessId, edge_id: edgeId, page },
        { timeoutMs: Limits.HISTORY_RPC_TIMEOUT_MS },
      ).catch((error: unknown) => {
        this.log.warn(`Stored sessions of access ${accessId} unavailable: ${(error as Error).message}`);
        return null;
      }),
    ]);
    if (!stored) return live;
    // An edge-level refusal (e.g. unsupported_user) is the answer; only "cannot reach" falls back.
    if (live.status !== 'ok' && !OFFLINE_STATUSES.has(live.status)) return live;
    return mergeSessions(live, stored, page);
  }
}
