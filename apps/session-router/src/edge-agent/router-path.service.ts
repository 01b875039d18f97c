import { Injectable, Logger } from '@nestjs/common';
import {
  ACTIONS,
  EDGE_AGENT_RPC_VERSION,
  type RouterPathKind,
  type EdgeAgentRequest,
  type EdgeAgentRPCRequest,
  type EdgeAgentResult,
  type RouterEdgeAgentRequest,
} from '#contracts';
import { EdgeRpcClient, type DispatchOptions, type EdgeReply } from '../common/edge-rpc.client.js';
import { HistoryClient } from '../common/history.client.js';
import { LeasesService } from '../leases/leases.service.js';
import { WatchService } from '../watch/watch.service.js';
import { historyPage, mergeSessions } from './sessions-merge.js';
import { StoredSessionsService } from './stored-sessions.service.js';

/** Edge statuses meaning the edge could not be asked; history still answers for it. */
const OFFLINE_STATUSES = new Set<EdgeAgentResult['status']>(['unavailable', 'upgrade_required']);

type PathHandler = (rpc: EdgeAgentRPCRequest) => Promise<EdgeAgentResult>;

/**
 * The path of a request without the mutation envelope: the caller's lease renewal, the router's
 * own parts (watch, stored sessions, history) and the edge call, and the title overlay of a
 * renamed session. `forward` takes any action; `send` and `direct` are the paths of an
 * operation's dispatch, answering what became of its one edge call.
 */
@Injectable()
export class RouterPath {
  private readonly log = new Logger(RouterPath.name);
  /** The router's own part of each path kind the action table names (actions.ts `router`). */
  private readonly paths: { readonly [K in RouterPathKind]: PathHandler } = {
    watch: async (rpc) => this.stored.withOfflineFallback(rpc, await this.watcher.watch(rpc)),
    live_or_stored: async (rpc) => this.stored.withOfflineFallback(rpc, await this.edge.ask(rpc)),
    sessions: (rpc) => this.sessions(rpc),
    resume: (rpc) => this.stored.resume(rpc),
    send: async (rpc) => (await this.stored.send(rpc)).result,
    rename: (rpc) => this.stored.rename(rpc),
    delete: (rpc) => this.stored.delete(rpc),
    discard: (rpc) => this.stored.discard(rpc),
    transcript: (rpc) => this.stored.transcript(rpc),
  };

  constructor(
    private readonly history: HistoryClient,
    private readonly edge: EdgeRpcClient,
    private readonly watcher: WatchService,
    private readonly leases: LeasesService,
    private readonly stored: StoredSessionsService,
  ) {}

  /** Any action, envelope already removed. */
  async forward(command: RouterEdgeAgentRequest, request: EdgeAgentRequest): Promise<EdgeAgentResult> {
    const rpc = edgeRpc(command, request);
    const reply = await this.leased(rpc, async () => ({ result: await this.dispatch(rpc) }));
    return reply.result;
  }

  /** An operation's send: stored-session windowing, then the edge call `dispatch` watches. */
  send(
    command: RouterEdgeAgentRequest,
    request: EdgeAgentRequest,
    dispatch: DispatchOptions,
  ): Promise<EdgeReply> {
    const rpc = edgeRpc(command, request);
    return this.leased(rpc, () => this.stored.send(rpc, dispatch));
  }

  /** An operation's interrupt, approve, answer, model or permissions: the edge alone. */
  direct(
    command: RouterEdgeAgentRequest,
    request: EdgeAgentRequest,
    dispatch: DispatchOptions,
  ): Promise<EdgeReply> {
    const rpc = edgeRpc(command, request);
    return this.leased(rpc, () => this.edge.call(rpc, dispatch));
  }

  /** Renews the caller's lease around `call` and lays a renamed session's title over its result. */
  private async leased<Reply extends { result: EdgeAgentResult }>(
    rpc: EdgeAgentRPCRequest,
    call: () => Promise<Reply>,
  ): Promise<Reply> {
    const { actor_id: actorId, request } = rpc;
    // The renewal runs beside the edge call, off the critical path of the reply.
    const renewal = this.leases.touch(actorId, request);
    // So does the title read of a prompt live read (poll, stop). Any other action reads it
    // after its call: a rename or delete changes it, a watch may wait through a rename.
    const title = ACTIONS[request.action].router === 'live_or_stored' ? this.stored.titleOf(rpc) : null;
    const reply = await call();
    await renewal;
    // `start` names its session only in the reply.
    if (request.action === 'start' && reply.result.status === 'ok' && reply.result.session_id) {
      await this.leases.touch(actorId, request, reply.result.session_id);
    }
    return { ...reply, result: await this.stored.overlayTitle(rpc, reply.result, title) };
  }

  /** The action's own router path, or the edge alone. */
  private async dispatch(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const kind: RouterPathKind | null = ACTIONS[rpc.request.action].router;
    return kind === null ? this.edge.ask(rpc) : this.paths[kind](rpc);
  }

  private async sessions(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const { access_id: accessId, edge_id: edgeId } = rpc.request;
    if (!accessId) return this.edge.ask(rpc);
    const page = historyPage(rpc.request.history_page);
    const [live, stored] = await Promise.all([
      this.edge.ask(rpc),
      this.history
        .call('historySessions', { actor_id: rpc.actor_id, access_id: accessId, edge_id: edgeId, page })
        .catch((error: unknown) => {
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

/** The edge RPC of a caller's request. */
function edgeRpc(command: RouterEdgeAgentRequest, request: EdgeAgentRequest): EdgeAgentRPCRequest {
  return {
    version: EDGE_AGENT_RPC_VERSION,
    actor_id: command.actor_id,
    request,
    ...(command.project_root !== undefined ? { project_root: command.project_root } : {}),
  };
}
