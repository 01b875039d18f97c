import { Inject, Injectable, Logger } from '@nestjs/common';
import type { RedisClient } from '../common/redis-client.js';
import {
  isOpaqueId,
  result,
  type EdgeAgentRPCRequest,
  type EdgeAgentResult,
  type HistorySessionScope,
  type HistoryTranscriptRequest,
  type RequestMap,
  type RequestOf,
} from '#contracts';
import { JournalCipher, RpcRemoteError, NatsBus } from '#messaging';
import {
  EdgeRpcClient,
  notDelivered,
  type DispatchOptions,
  type EdgeReply,
} from '../common/edge-rpc.client.js';
import { HistoryClient } from '../common/history.client.js';
import { REDIS } from '../common/tokens.js';
import { LifecyclePublisher } from '../journal-sequencer/lifecycle.js';
import { JournalSequencerService } from '../journal-sequencer/journal-sequencer.service.js';
import { TitleOverrides } from './title-overrides.js';

/**
 * Edge statuses after which a session with stored history answers from history instead
 * (reference §4 "Offline behavior": the edge is gone, too old, or no longer has the session).
 */
const OFFLINE_FALLBACK_STATUSES = new Set<EdgeAgentResult['status']>([
  'not_found',
  'unavailable',
  'upgrade_required',
]);

/** The history key of a request: only saved-access sessions have one (reference §4 "Save rules"). */
export function historyScope(rpc: EdgeAgentRPCRequest): HistorySessionScope | null {
  const { access_id: accessId, session_id: sessionId, edge_id: edgeId } = rpc.request;
  if (!accessId || !sessionId || !isOpaqueId(sessionId)) return null;
  return { actor_id: rpc.actor_id, access_id: accessId, edge_id: edgeId, session_id: sessionId };
}

/** The same session on the same edge, asked to `stop` or `delete` its live copy. */
function liveTarget(rpc: EdgeAgentRPCRequest, action: 'stop' | 'delete'): EdgeAgentRPCRequest {
  const { edge_id: edgeId, session_id: sessionId, access_id: accessId } = rpc.request;
  return { ...rpc, request: { edge_id: edgeId, session_id: sessionId, access_id: accessId, action } };
}

/**
 * The Manager side of durable history for one action (reference §2.3 resume, send, rename,
 * delete, discard, transcript; §4 offline behaviour): history is asked before or after the edge
 * as each action needs, and a history failure never turns into a guess.
 */
@Injectable()
export class StoredSessionsService {
  private readonly log = new Logger(StoredSessionsService.name);
  private readonly lifecycle: LifecyclePublisher;

  constructor(
    private readonly edge: EdgeRpcClient,
    private readonly history: HistoryClient,
    private readonly titles: TitleOverrides,
    private readonly journal: JournalSequencerService,
    bus: NatsBus,
    @Inject(REDIS) redis: RedisClient,
    cipher: JournalCipher,
  ) {
    this.lifecycle = new LifecyclePublisher(bus, redis, cipher);
  }

  /** poll, watch, stop (and snapshot): the archived view when the edge cannot answer for the session. */
  async withOfflineFallback(rpc: EdgeAgentRPCRequest, reply: EdgeAgentResult): Promise<EdgeAgentResult> {
    const scope = historyScope(rpc);
    if (!scope || !OFFLINE_FALLBACK_STATUSES.has(reply.status)) return reply;
    try {
      const stored = await this.history.call('historySnapshot', scope);
      if (stored.state === 'deleted') return result('not_found');
      return stored.state === 'stored' && stored.snapshot ? stored.snapshot : reply;
    } catch (error) {
      this.log.warn(
        `Stored snapshot of session ${scope.session_id} unavailable: ${(error as Error).message}`,
      );
      return reply;
    }
  }

  /** resume: the seed comes from history only; a client can never supply it. */
  async resume(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const scope = historyScope(rpc);
    if (!scope) return this.edge.ask(rpc);
    let seed;
    try {
      seed = await this.atJournal('historyResumeSeed', scope);
    } catch (error) {
      this.log.warn(`Resume seed of session ${scope.session_id} unavailable: ${(error as Error).message}`);
      return result('unavailable');
    }
    if (seed.state === 'deleted') return result('not_found');
    if (seed.state !== 'stored' || !seed.resume) return result('resume_unavailable');
    return this.edge.ask({ ...rpc, resume: seed.resume });
  }

  /**
   * send (reference §2.3 send, §4 windows), one edge call: `reset_revision` is the last revision
   * of the session the journal holds, and the edge rolls its window only when that (or a newer
   * revision this router acknowledged to it) is the window's final state. History archives the
   * finished round from the journal, off the send path. The delivery is the send's own (a
   * refusal before it is `not_delivered`); `dispatch` goes to that call alone.
   */
  async send(rpc: EdgeAgentRPCRequest, dispatch: DispatchOptions = {}): Promise<EdgeReply> {
    const scope = historyScope(rpc);
    if (!scope) return this.edge.call(rpc, dispatch);
    let standing;
    try {
      standing = await this.journal.sendStanding(scope.session_id);
    } catch (error) {
      this.log.warn(
        `Journal head of session ${scope.session_id} unreadable, send refused: ${(error as Error).message}`,
      );
      return notDelivered(result('unavailable'));
    }
    if (standing.deleted) {
      // Deleted while its edge was away: the edge's copy goes now, and nothing reaches the agent.
      await this.edge.ask(liveTarget(rpc, 'delete'));
      return notDelivered(result('not_found'));
    }
    const { revision } = standing;
    return this.edge.call(revision > 0 ? { ...rpc, reset_revision: revision } : rpc, dispatch);
  }

  /** rename: a title override in history, answered with the archived view; live only without history. */
  async rename(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const scope = historyScope(rpc);
    if (!scope) return this.edge.ask(rpc);
    const title = (rpc.request.title ?? '').trim();
    let renamed;
    try {
      renamed = await this.history.call('historyRename', { ...scope, title });
    } catch (error) {
      this.log.warn(`Rename of session ${scope.session_id} not stored: ${(error as Error).message}`);
      return result('unavailable');
    }
    if (renamed.state === 'deleted') return result('not_found');
    // Not saved yet (history has not seen the session): the edge renames it, and history stores
    // the new title with the next snapshot.
    if (renamed.state !== 'stored' || !renamed.snapshot) return this.edge.ask(rpc);
    await this.titles.set(scope.session_id, title).catch((error: unknown) => {
      this.log.warn(`Title override of session ${scope.session_id} not cached: ${(error as Error).message}`);
    });
    return renamed.snapshot;
  }

  /** delete: tombstone first, then a best-effort live stop and delete (reference §2.3 delete). */
  async delete(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const scope = historyScope(rpc);
    if (!scope) return this.edge.ask(rpc);
    let before;
    try {
      before = (await this.history.call('historyDelete', scope)).state;
    } catch (error) {
      this.log.warn(
        `Session ${scope.session_id} not tombstoned, delete refused: ${(error as Error).message}`,
      );
      return result('unavailable');
    }
    await this.titles.clear(scope.session_id).catch(() => undefined);
    await this.journal.markDeleted(scope.session_id).catch((error: unknown) => {
      this.log.warn(`Session ${scope.session_id} not marked deleted: ${(error as Error).message}`);
    });
    await this.edge.ask(liveTarget(rpc, 'stop'));
    const live = await this.edge.ask(liveTarget(rpc, 'delete'));
    if (before === 'stored' || (before === 'missing' && live.status === 'ok')) {
      // After the live stop, so the rows that stop caused are (usually) announced before it.
      await this.announceDeleted(scope);
      return result('ok', { history_persistent: true });
    }
    return before === 'deleted' ? result('not_found') : live;
  }

  /** discard: the edge decides (empty, idle, owned); a discarded session leaves only a tombstone. */
  async discard(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const reply = await this.edge.ask(rpc);
    const scope = historyScope(rpc);
    if (!scope || reply.status !== 'ok') return reply;
    let before: string | undefined;
    try {
      before = (await this.history.call('historyDelete', scope)).state;
    } catch (error) {
      // The session is gone on the edge and was empty; a row left behind holds no content.
      this.log.warn(`Discarded session ${scope.session_id} not tombstoned: ${(error as Error).message}`);
    }
    // Gone on the edge either way; only an earlier tombstone means it was announced already.
    if (before !== 'deleted') await this.announceDeleted(scope);
    return reply;
  }

  /**
   * `session.deleted` (docs/events.md). Best effort: the deletion already happened and is
   * answered ok; a lost event is logged, and a repeated delete (not_found) never re-announces.
   */
  private async announceDeleted(scope: HistorySessionScope): Promise<void> {
    try {
      await this.lifecycle.publishDeleted(
        {
          session_id: scope.session_id,
          edge_id: scope.edge_id,
          actor_id: scope.actor_id,
          access_id: scope.access_id,
        },
        Date.now(),
      );
    } catch (error) {
      this.log.warn(`session.deleted of ${scope.session_id} not published: ${(error as Error).message}`);
    }
  }

  /** transcript: one archived round per page, newest below `history_before` (reference §2.3). */
  async transcript(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const scope = historyScope(rpc);
    if (!scope) return result('not_found');
    const raw = rpc.request.history_before ?? '';
    const before = raw === '' ? undefined : Number(raw);
    if (before !== undefined && (!Number.isSafeInteger(before) || before < 0))
      return result('invalid_request');
    try {
      const page = await this.transcriptPage({ ...scope, ...(before !== undefined ? { before } : {}) });
      return page ?? result('not_found');
    } catch (error) {
      this.log.warn(`Transcript of session ${scope.session_id} unavailable: ${(error as Error).message}`);
      return result('unavailable');
    }
  }

  /**
   * History applies the journal behind the router, so it is asked to answer once it holds what
   * the journal held now: a round whose page is still in flight is then not skipped, and a resume
   * is never seeded from a session row older than the journal.
   */
  private async transcriptPage(request: HistoryTranscriptRequest): Promise<EdgeAgentResult | undefined> {
    return (await this.atJournal('historyTranscript', request)).page;
  }

  /** A history request carrying the journal's position of the session (`stream_sequence`). */
  private async atJournal<N extends 'historyTranscript' | 'historyResumeSeed'>(
    name: N,
    request: RequestOf<N>,
  ): Promise<RequestMap[N][1]> {
    const streamSequence = await this.journal.journaledStreamSequence(request.session_id);
    if (streamSequence === 0) return this.history.call(name, request);
    try {
      return await this.history.call(name, { ...request, stream_sequence: streamSequence });
    } catch (error) {
      // History of the previous release decodes the request strictly and refuses the field
      // (rolling upgrade): ask it as before. Drop this with that release.
      if (!(error instanceof RpcRemoteError) || error.code !== 'invalid_request') throw error;
      return this.history.call(name, request);
    }
  }

  /**
   * Every live reply of a renamed session carries the override (reference §2.3 rename). `title`
   * is a read of it started earlier (`titleOf`); without one, it is read now.
   */
  async overlayTitle(
    rpc: EdgeAgentRPCRequest,
    reply: EdgeAgentResult,
    title: Promise<string | null> | null = null,
  ): Promise<EdgeAgentResult> {
    const scope = historyScope(rpc);
    if (!scope || reply.archived || reply.session_id !== scope.session_id) return reply;
    const override = await (title ?? this.titleOf(rpc));
    return override === null ? reply : { ...reply, title: override };
  }

  /** The session's title override; null when it has none, or when Redis cannot say. */
  async titleOf(rpc: EdgeAgentRPCRequest): Promise<string | null> {
    const scope = historyScope(rpc);
    if (!scope) return null;
    try {
      return await this.titles.get(scope.session_id);
    } catch (error) {
      this.log.warn(`Title override of session ${scope.session_id} unreadable: ${(error as Error).message}`);
      return null;
    }
  }
}
