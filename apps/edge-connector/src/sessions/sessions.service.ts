// The edge's session manager: every edge_agent_v1 action after the envelope checks. Sessions are
// scoped by (owner, access, session); any mismatch is `not_found` (reference §2.3, §5).
import { realpath } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  APPROVAL_DECISIONS,
  EDGE_AGENT_ACTIONS,
  EDGE_AGENT_INTERNAL_ACTIONS,
  FILE_ACTIONS,
  Limits,
  isOperationAction,
  PERMISSION_MODES,
  result,
  sentMessageItemId,
  type ApprovalDecision,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
  type Installation,
  type PermissionMode,
  type SessionSummary,
  type SessionUpdate,
} from '#contracts';
import { DriverError, type AgentDriver, type AgentSession } from '../agent/agent-driver.js';
import { EdgeStatusError } from '../common/edge-errors.js';
import { hashId, randomId } from '../common/random.js';
import { promptWithAttachments, type PreparedAttachments } from '../files/attachments.js';
import { FilesService } from '../files/files.service.js';
import { BINDINGS_MAX, BindingStore, BindingStoreError } from './bindings.js';
import { DispatchRecords, type RecordedDispatch } from './dispatch-records.js';
import { LiveSession, type LiveSessionInit, type SessionSkill } from './live-session.js';
import { checkBinding, checkResumeSeed, type RestoredDisplay } from './resume.js';
import { validTitle } from './session-title.js';
import type { SessionClock } from './turn-state.js';

export const AGENT_DRIVER = Symbol('AGENT_DRIVER');
export const SESSIONS_OPTIONS = Symbol('SESSIONS_OPTIONS');
export const SESSION_CHANGE_SINK = Symbol('SESSION_CHANGE_SINK');

/** The session part of a SessionUpdate; the publisher adds the edge's credentials. */
export type SessionChange = Omit<SessionUpdate, 'edge_id' | 'edge_token'>;

/** Receives a way to build the latest update of a session after each change (see updates/). */
export interface SessionChangeSink {
  changed(sessionId: string, build: () => SessionChange): void;
}

export interface SessionsOptions {
  homeDir: string;
  /** True when the process runs as root and TETHER_EDGE_ALLOW_ROOT is not set. */
  unsupportedUser: boolean;
  clock?: SessionClock;
  /** How long a closed saved session stays in memory; tests shorten it. */
  closedRetentionMs?: number;
  /** Where the resume bindings file lives (TETHER_EDGE_DATA_DIR); unset keeps them in memory only. */
  dataDir?: string;
}

/** A model catalog larger than this is refused as a broken agent answer (reference §2.3). */
const MODELS_MAX = 256;
/** Actions of the contract this edge does not serve yet; clients learn it from the status. */
const NOT_YET_SERVED: ReadonlySet<string> = new Set(['transcript']);
const FILE_ACTION_SET: ReadonlySet<string> = new Set(FILE_ACTIONS);
const KNOWN_ACTIONS: ReadonlySet<string> = new Set([...EDGE_AGENT_ACTIONS, ...EDGE_AGENT_INTERNAL_ACTIONS]);

const systemClock: SessionClock = { monotonic: () => performance.now(), wall: () => Date.now() };

function toPublicStatus(error: unknown): EdgeStatusError {
  if (error instanceof EdgeStatusError) return error;
  if (error instanceof DriverError) return new EdgeStatusError(error.status, error.message);
  if (error instanceof BindingStoreError) return new EdgeStatusError('unavailable', error.message);
  return new EdgeStatusError('unavailable', 'The agent failed.');
}

@Injectable()
export class SessionsService {
  private readonly log = new Logger(SessionsService.name);
  private readonly sessions = new Map<string, LiveSession>();
  private readonly retention = new Map<string, NodeJS.Timeout>();
  private readonly clock: SessionClock;
  private startsInFlight = 0;
  private installations: Installation[] = [];
  /** Session ids with a resume in flight: a second one is `busy`. */
  private readonly resuming = new Set<string>();
  /** The resume bindings of saved sessions (the file actions check them too). */
  readonly bindings: BindingStore;
  /** What became of each enveloped mutation, by its dispatch id (dispatch-records.ts). */
  readonly dispatches: DispatchRecords;
  /** Enveloped mutations running now, by owner, session and dispatch id (see `once`). */
  private readonly dispatching = new Map<string, Promise<EdgeAgentResult>>();

  constructor(
    @Inject(AGENT_DRIVER) private readonly driver: AgentDriver,
    @Inject(SESSIONS_OPTIONS) private readonly options: SessionsOptions,
    @Inject(SESSION_CHANGE_SINK) private readonly sink: SessionChangeSink,
    /** directories, file_* and attachments; without it they answer `upgrade_required`. */
    @Optional() @Inject(FilesService) private readonly files?: FilesService,
  ) {
    this.clock = options.clock ?? systemClock;
    this.bindings = new BindingStore(options.dataDir ?? null);
    this.dispatches = new DispatchRecords(() => this.clock.wall());
  }

  get liveSessions(): number {
    let live = 0;
    for (const session of this.sessions.values()) if (!session.closed) live += 1;
    return live;
  }

  get knownInstallations(): Installation[] {
    return this.installations;
  }

  /** One action of an already envelope-checked request. Never throws. */
  async handle(rpc: EdgeAgentRPCRequest, signal: AbortSignal): Promise<EdgeAgentResult> {
    try {
      if (rpc.dispatch_id && isOperationAction(rpc.request.action)) {
        return await this.once(rpc, rpc.dispatch_id, () => this.dispatch(rpc, signal));
      }
      return await this.dispatch(rpc, signal);
    } catch (error) {
      const status = toPublicStatus(error);
      if (error instanceof BindingStoreError) {
        this.log.error(`Action ${rpc.request.action} could not use the binding file: ${error.message}`);
      } else if (!(error instanceof EdgeStatusError) && !(error instanceof DriverError)) {
        this.log.error(`Action ${rpc.request.action} failed unexpectedly: ${(error as Error).message}`);
      }
      return result(status.status);
    }
  }

  private dispatch(rpc: EdgeAgentRPCRequest, signal: AbortSignal): Promise<EdgeAgentResult> {
    const action: string = rpc.request.action;
    if (NOT_YET_SERVED.has(action))
      throw new EdgeStatusError('upgrade_required', `${action} is not served yet.`);
    if (FILE_ACTION_SET.has(action)) return this.requireFiles().handle(rpc, this.lookup(rpc));
    switch (rpc.request.action) {
      case 'directories':
        this.requireSupportedUser();
        return this.requireFiles().directories(rpc);
      case 'discover':
        return this.discover();
      case 'start':
        return this.start(rpc);
      case 'resume':
        return this.resume(rpc);
      case 'sessions':
        return Promise.resolve(this.list(rpc));
      case 'poll':
      case 'snapshot':
        return Promise.resolve(this.lookup(rpc).snapshot());
      case 'watch':
        return this.watch(rpc, signal);
      case 'send':
        return this.send(rpc);
      case 'dispatch_status':
        return Promise.resolve(this.dispatchStatus(rpc));
      case 'interrupt':
        return this.interrupt(rpc);
      case 'stop':
        return this.stop(rpc);
      case 'expire':
        return this.expire(rpc);
      case 'approve':
        return this.approve(rpc);
      case 'answer':
        return this.answer(rpc);
      case 'permissions':
        return this.permissions(rpc);
      case 'models':
        return this.listModels(rpc);
      case 'model':
        return this.selectModel(rpc);
      case 'rename':
        return Promise.resolve(this.rename(rpc));
      case 'delete':
        return this.remove(rpc);
      case 'discard':
        return this.discard(rpc);
      default:
        throw new EdgeStatusError(
          'invalid_request',
          KNOWN_ACTIONS.has(action) ? `${action} is not handled.` : 'Unknown action.',
        );
    }
  }

  // ---- lookup and lifetime ----

  private lookup(rpc: EdgeAgentRPCRequest): LiveSession {
    const session = this.sessions.get(rpc.request.session_id ?? '');
    if (!session || session.owner !== rpc.actor_id || session.access !== (rpc.request.access_id ?? '')) {
      throw new EdgeStatusError('not_found', 'No such session for this owner and access.');
    }
    return session;
  }

  private forget(session: LiveSession): void {
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    const timer = this.retention.get(session.id);
    if (timer) clearTimeout(timer);
    this.retention.delete(session.id);
  }

  private requireFiles(): FilesService {
    if (!this.files) throw new EdgeStatusError('upgrade_required', 'Files are not served by this edge.');
    return this.files;
  }

  private onClosed(session: LiveSession): void {
    // Its transfers end and its attachment snapshots go with the runtime (reference §2.3).
    void this.files?.sessionClosed(session.id).catch(() => undefined);
    if (!session.saved) return;
    // Closed saved sessions answer polls for a day, then only history has them.
    const timer = setTimeout(
      () => this.forget(session),
      this.options.closedRetentionMs ?? Limits.CLOSED_SNAPSHOT_RETENTION_MS,
    );
    timer.unref();
    this.retention.set(session.id, timer);
  }

  private changeOf(session: LiveSession): SessionChange {
    return {
      actor_id: session.owner,
      access_id: session.access || undefined,
      session_id: session.id,
      revision: session.revision,
      snapshot: session.snapshot(),
      emitted_at: session.updatedAt,
    };
  }

  private track(session: LiveSession): void {
    this.sink.changed(session.id, () => this.changeOf(session));
  }

  /** Closes the session and waits for the agent; a failed native close shows as `unavailable`. */
  private async closeSession(session: LiveSession, status: 'session_closed' | 'expired'): Promise<void> {
    try {
      await session.close(status);
    } catch {
      this.log.warn(`Session ${session.id} did not close its agent cleanly.`);
      session.closeFailed();
    }
  }

  /** Closes every session (edge shutdown); their final states go to the publisher. */
  async shutdown(): Promise<void> {
    for (const timer of this.retention.values()) clearTimeout(timer);
    this.retention.clear();
    await Promise.allSettled(
      [...this.sessions.values()].map((session) => this.closeSession(session, 'session_closed')),
    );
  }

  // ---- discover / start ----

  private requireSupportedUser(): void {
    if (this.options.unsupportedUser)
      throw new EdgeStatusError('unsupported_user', 'Agents do not run as root.');
  }

  private async discover(): Promise<EdgeAgentResult> {
    this.requireSupportedUser();
    let discovery;
    try {
      discovery = await this.driver.discover();
    } catch (error) {
      // A driver's own status (unsupported_user) passes through; anything else is unavailable.
      if (error instanceof DriverError) throw error;
      throw new EdgeStatusError('unavailable', 'Discovery failed.');
    }
    this.installations = discovery.installations;
    return result('ok', {
      installations: discovery.installations,
      default_project: this.options.homeDir,
      truncated: discovery.truncated,
    });
  }

  /** Refreshes discovery when needed; a failure to find is `not_found`. */
  async refreshInstallations(): Promise<Installation[]> {
    const discovery = await this.driver.discover();
    this.installations = discovery.installations;
    return this.installations;
  }

  private async resolveDirectory(path: string): Promise<string> {
    if (!isAbsolute(path) || path.includes('\0'))
      throw new EdgeStatusError('invalid_request', 'The path must be absolute.');
    try {
      return await realpath(path);
    } catch {
      throw new EdgeStatusError('invalid_request', 'The path does not resolve.');
    }
  }

  private async start(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    this.requireSupportedUser();
    const request = rpc.request;
    const project = await this.resolveDirectory(request.project ?? '');
    const projectRoot = rpc.project_root ? await this.resolveDirectory(rpc.project_root) : project;
    let cwd = project;
    if (request.working_directory) {
      const wanted = await this.resolveDirectory(request.working_directory);
      const roots: string[] = [];
      for (const root of [this.options.homeDir, rpc.project_root]) {
        if (!root) continue;
        try {
          const resolved = await realpath(root);
          if (resolved !== '/') roots.push(resolved);
        } catch {
          // A root that does not resolve offers nothing to browse.
        }
      }
      if (!roots.some((root) => wanted === root || wanted.startsWith(`${root}/`))) {
        throw new EdgeStatusError('invalid_request', 'The working directory is outside the browse roots.');
      }
      cwd = wanted;
    }
    let installation = this.installations.find((candidate) => candidate.id === request.installation_id);
    if (!installation) {
      const fresh = await this.refreshInstallations().catch(() => []);
      installation = fresh.find((candidate) => candidate.id === request.installation_id);
    }
    if (!installation) throw new EdgeStatusError('not_found', 'No such installation.');
    const access = request.access_id ?? '';
    if (access && (await this.bindings.count()) >= BINDINGS_MAX) {
      throw new EdgeStatusError('unavailable', 'The binding store is full.');
    }
    const session = await this.launch({
      id: randomId(),
      owner: rpc.actor_id,
      access,
      installation,
      cwd,
      projectRoot,
    });
    this.log.log(`Session ${session.id} started with ${installation.kind}.`);
    return session.snapshot();
  }

  /**
   * Opens the agent for a new live session and registers it; shared by start and resume. A new
   * saved session gets its binding persisted; if that fails, the agent is closed (`unavailable`).
   */
  private async launch(
    init: LiveSessionInit,
    resumed?: { threadId: string; display: RestoredDisplay },
  ): Promise<LiveSession> {
    if (this.liveSessions + this.startsInFlight >= Limits.EDGE_LIVE_SESSIONS_MAX) {
      throw new EdgeStatusError('busy', 'Live session capacity reached.');
    }
    this.startsInFlight += 1;
    try {
      const session = new LiveSession(init, {
        clock: this.clock,
        changed: (changed) => this.track(changed),
        closed: (closed) => this.onClosed(closed),
      });
      if (resumed) session.restore(resumed.display);
      let agent: AgentSession;
      try {
        agent = await this.driver.open({
          installation: init.installation,
          cwd: init.cwd,
          saved: session.saved,
          ...(resumed ? { threadId: resumed.threadId } : {}),
          onEvent: (event) => session.apply(event),
        });
      } catch (error) {
        if (error instanceof DriverError) throw error;
        throw new EdgeStatusError('launch_failed', 'The agent did not start.');
      }
      const refuse = async (status: 'busy' | 'unavailable' | 'resume_unavailable', why: string) => {
        await agent.close().catch(() => undefined);
        return new EdgeStatusError(status, why);
      };
      if (resumed && !agent.capabilities.resume) {
        throw await refuse('resume_unavailable', 'The agent cannot resume.');
      }
      const other = this.sessions.get(init.id);
      if (other && !other.closed) throw await refuse('busy', 'The session is already open.');
      if (session.saved && !resumed) {
        try {
          await this.bindings.put({
            owner: init.owner,
            access: init.access,
            session: init.id,
            thread: agent.threadId,
            project: init.cwd,
            access_project: init.projectRoot,
            installation_id: init.installation.id,
            kind: init.installation.kind,
          });
        } catch {
          throw await refuse('unavailable', 'The resume binding could not be saved.');
        }
      }
      session.attach(agent, agent.capabilities.skills ? await this.loadSkills(agent) : null);
      if (other) this.forget(other);
      this.makeRoom();
      this.sessions.set(session.id, session);
      this.track(session);
      return session;
    } finally {
      this.startsInFlight -= 1;
    }
  }

  /**
   * Relaunches a saved session after its runtime ended (edge restart, stop, expiry) from its
   * binding, with the display state of the history seed (reference §2.3 resume).
   */
  private async resume(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    this.requireSupportedUser();
    const display = checkResumeSeed(rpc);
    const id = rpc.request.session_id ?? '';
    const access = rpc.request.access_id ?? '';
    const live = this.sessions.get(id);
    if (live) {
      if (live.owner !== rpc.actor_id || live.access !== access) {
        throw new EdgeStatusError('resume_unavailable', 'The session belongs to someone else.');
      }
      // Resuming an open session is idempotent: a retried resume sees the same session.
      if (!live.closed) return live.snapshot();
    }
    if (this.resuming.has(id)) throw new EdgeStatusError('busy', 'The session is being resumed.');
    this.resuming.add(id);
    try {
      const binding = await this.bindings.get(rpc.actor_id, access, id);
      const installation = await checkBinding(binding, rpc.project_root, () =>
        this.refreshInstallations().catch(() => []),
      );
      const bound = binding as NonNullable<typeof binding>;
      const session = await this.launch(
        {
          id,
          owner: rpc.actor_id,
          access,
          installation,
          cwd: bound.project,
          projectRoot: bound.access_project,
        },
        { threadId: bound.thread, display },
      );
      this.log.log(`Session ${id} resumed with ${installation.kind}.`);
      return session.snapshot();
    } finally {
      this.resuming.delete(id);
    }
  }

  private async loadSkills(agent: AgentSession): Promise<SessionSkill[] | null> {
    try {
      const skills = await agent.listSkills();
      return skills.map((info) => ({ id: hashId(info.name, info.path), info }));
    } catch {
      return null;
    }
  }

  /** Keeps at most EDGE_REMEMBERED_SESSIONS_MAX in memory by forgetting the oldest closed ones. */
  private makeRoom(): void {
    while (this.sessions.size >= Limits.EDGE_REMEMBERED_SESSIONS_MAX) {
      let oldest: LiveSession | undefined;
      for (const session of this.sessions.values()) {
        if (session.closed && (!oldest || session.updatedAt < oldest.updatedAt)) oldest = session;
      }
      if (!oldest) return;
      this.forget(oldest);
    }
  }

  // ---- reading ----

  private list(rpc: EdgeAgentRPCRequest): EdgeAgentResult {
    const access = rpc.request.access_id ?? '';
    const sessions: SessionSummary[] = [...this.sessions.values()]
      .filter((session) => session.owner === rpc.actor_id && session.access === access)
      .sort((a, b) => b.updatedAt - a.updatedAt)
      .map((session) => ({
        session_id: session.id,
        thread_id: session.agent?.threadId,
        title: session.displayTitle(),
        project: session.cwd,
        updated_at: new Date(session.updatedAt).toISOString(),
        running: session.running,
        closed: session.closed,
        status: session.status,
      }));
    return result('ok', { sessions, sessions_available: true });
  }

  private async watch(rpc: EdgeAgentRPCRequest, signal: AbortSignal): Promise<EdgeAgentResult> {
    const session = this.lookup(rpc);
    if (rpc.request.cursor === String(session.revision) && !session.closed) {
      await session.waitForChange(Limits.WATCH_WAIT_MS, signal);
    }
    // A short pause after waking lets a burst of deltas land in one reply.
    await new Promise<void>((done) => {
      const timer = setTimeout(done, Limits.WATCH_COALESCE_MS);
      signal.addEventListener('abort', () => (clearTimeout(timer), done()), { once: true });
    });
    if (signal.aborted) throw new EdgeStatusError('unavailable', 'The watch was cancelled.');
    return this.lookup(rpc).snapshot();
  }

  // ---- turns ----

  /**
   * An enveloped mutation (the router names it with its operation id, `dispatch_id`) has one
   * outcome however often it arrives: the first copy runs and its outcome is recorded; a copy that
   * arrives meanwhile waits for it, and a later one answers the record instead of running again
   * (no second turn, no second interrupt), even after the session is gone. This holds while the
   * router's ledger is lost (Redis flushed) as long as this edge process lives (dispatch-records.ts).
   */
  private async once(
    rpc: EdgeAgentRPCRequest,
    id: string,
    run: () => Promise<EdgeAgentResult>,
  ): Promise<EdgeAgentResult> {
    const owner = rpc.actor_id;
    const sessionId = rpc.request.session_id ?? '';
    const prior = this.dispatches.find(owner, sessionId, id);
    if (prior) return this.recordedAnswer(rpc, prior);
    const key = `${owner}\u0000${sessionId}\u0000${id}`;
    const running = this.dispatching.get(key);
    if (running) return running;
    const work = (async () => {
      let reply: EdgeAgentResult;
      try {
        reply = await run();
      } catch (error) {
        const status = toPublicStatus(error).status;
        // `not_found` says this process holds no such session (it restarted, say), nothing about
        // the dispatch, which an earlier process may have run. Recorded, it would answer
        // not_found for ever, even once the session is resumed, and tell the reconciler
        // `rejected` for a send that may have happened; unrecorded, it is `absent`, as after any restart.
        if (status !== 'not_found') {
          this.dispatches.record({ owner, session: sessionId, id, state: 'rejected', status });
        }
        throw error;
      }
      const itemId = rpc.request.action === 'send' ? sentMessageItemId(reply) : undefined;
      this.dispatches.record({
        owner,
        session: sessionId,
        id,
        state: 'accepted',
        ...(itemId ? { itemId } : {}),
      });
      return reply;
    })();
    this.dispatching.set(key, work);
    try {
      return await work;
    } finally {
      this.dispatching.delete(key);
    }
  }

  /** A repeated dispatch id: its first outcome, with the session's state now (if it still has one). */
  private recordedAnswer(rpc: EdgeAgentRPCRequest, prior: RecordedDispatch): EdgeAgentResult {
    if (prior.state === 'rejected') {
      const status = prior.status && prior.status !== 'ok' ? prior.status : 'unavailable';
      throw new EdgeStatusError(status, 'This dispatch was refused before.');
    }
    const dispatch = this.dispatches.describe(prior.owner, prior.session, prior.id);
    let snapshot: EdgeAgentResult | undefined;
    try {
      snapshot = this.lookup(rpc).snapshot();
    } catch {
      // Closed and forgotten since: the record still answers.
    }
    return snapshot ? { ...snapshot, dispatch } : result('ok', { session_id: prior.session, dispatch });
  }

  private send(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const session = this.lookup(rpc);
    return session.lock.run(() => this.sendLocked(rpc, session));
  }

  /** The reconciler's question: what became of this dispatch id (`absent` proves nothing). */
  private dispatchStatus(rpc: EdgeAgentRPCRequest): EdgeAgentResult {
    const sessionId = rpc.request.session_id ?? '';
    const dispatch = this.dispatches.describe(rpc.actor_id, sessionId, rpc.dispatch_id ?? '');
    return result('ok', { session_id: sessionId, dispatch });
  }

  private async sendLocked(rpc: EdgeAgentRPCRequest, session: LiveSession): Promise<EdgeAgentResult> {
    const request = rpc.request;
    // The session may have been discarded while this send waited for the lock.
    this.lookup(rpc);
    let attached: PreparedAttachments | undefined;
    if ((request.attachments ?? []).length > 0) {
      if (!this.files || !session.agent?.capabilities.attachments)
        throw new EdgeStatusError('upgrade_required', 'This agent takes no attachments.');
      attached = await this.files.prepareAttachments(session, request.attachments ?? []);
    }
    try {
      this.checkSend(rpc, session, attached);
    } catch (error) {
      await this.files?.attachments.discard(attached);
      throw error;
    }
    const text = request.text ?? '';
    const skill = request.skill_id
      ? session.skills.find((candidate) => candidate.id === request.skill_id)
      : undefined;
    if (rpc.reset_revision) session.resetWindow();
    session.beginTurn(text, attached?.files);
    const timing = session.turnTiming;
    try {
      if (!session.agent) throw new EdgeStatusError('busy', 'The session has no agent.');
      const { turnId } = await session.agent.startTurn({
        text: attached ? promptWithAttachments(text, attached.paths) : text,
        permissionMode: session.permissionMode,
        model: session.selectedModel,
        skill: skill?.info,
        ...(attached && attached.images.length > 0 ? { images: attached.images } : {}),
      });
      session.turnDispatched(turnId, timing);
    } catch {
      this.log.warn(`Session ${session.id} failed to dispatch a turn; closing it.`);
      await this.closeFailedTurn(session);
    }
    // The previous turn's image snapshots are no longer needed by the agent. The turn has begun:
    // a failed clean-up must not turn the send into a refusal.
    try {
      await this.files?.attachments.turnStarted(session.id, attached);
    } catch (error) {
      this.log.warn(`Session ${session.id} kept old attachment snapshots: ${(error as Error).message}`);
    }
    return session.snapshot();
  }

  /** The refusals of a send before anything changes (reference §2.3 send steps 2-5). */
  private checkSend(rpc: EdgeAgentRPCRequest, session: LiveSession, attached?: PreparedAttachments): void {
    const request = rpc.request;
    if (request.skill_id) {
      const skill = session.skills.find((candidate) => candidate.id === request.skill_id);
      if (!skill || !session.agent?.capabilities.skills)
        throw new EdgeStatusError('invalid_request', 'Unknown skill.');
    }
    const text = request.text ?? '';
    if (!text.trim() && !attached) throw new EdgeStatusError('invalid_request', 'The prompt is blank.');
    if (session.running || session.closed || !session.agent)
      throw new EdgeStatusError('busy', 'The session is busy.');
    // Only the router sets it, after archiving exactly this revision; anything newer would be lost.
    if (rpc.reset_revision && (!session.saved || session.revision !== rpc.reset_revision)) {
      throw new EdgeStatusError('busy', 'The archived revision is stale.');
    }
  }

  private async closeFailedTurn(session: LiveSession): Promise<void> {
    try {
      await session.close('turn_failed');
    } catch {
      // The session is already marked turn_failed; the native close is best effort.
    }
  }

  private async interrupt(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const session = this.lookup(rpc);
    const turnId = session.currentTurnId;
    // Before the native side named the turn there is nothing to interrupt yet (reference §9.11).
    if (session.running && turnId && session.agent) {
      try {
        await session.agent.interrupt(turnId);
      } catch {
        await this.closeFailedTurn(session);
      }
    }
    return session.snapshot();
  }

  private async stop(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const session = this.lookup(rpc);
    await this.closeSession(session, 'session_closed');
    const snapshot = session.snapshot();
    if (!session.saved) this.forget(session);
    return snapshot;
  }

  /** The router's lease reaper: idle sessions close with `expired`; a running turn is never cut. */
  private async expire(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const session = this.lookup(rpc);
    if (session.running) throw new EdgeStatusError('busy', 'A turn is running.');
    if (!session.closed) await this.closeSession(session, 'expired');
    const snapshot = session.snapshot();
    if (!session.saved) this.forget(session);
    return snapshot;
  }

  // ---- approvals, inputs, permissions ----

  private requireInteractive(session: LiveSession, capability: 'approvals' | 'input' | 'permissions'): void {
    if (!session.saved || !session.agent?.capabilities[capability]) {
      throw new EdgeStatusError('upgrade_required', `${capability} need a saved access and a capable agent.`);
    }
  }

  private async approve(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const session = this.lookup(rpc);
    this.requireInteractive(session, 'approvals');
    if (session.closed) throw new EdgeStatusError('session_closed', 'The session is closed.');
    const decision = rpc.request.decision ?? '';
    if (!(APPROVAL_DECISIONS as readonly string[]).includes(decision)) {
      throw new EdgeStatusError('invalid_request', 'Unknown decision.');
    }
    const taken = session.takeApproval(rpc.request.approval_id ?? '');
    if (!taken) throw new EdgeStatusError('invalid_request', 'No such pending approval for this turn.');
    try {
      await session.agent?.respondApproval(taken.nativeId, decision as ApprovalDecision);
    } catch {
      this.log.warn(`Session ${session.id} could not deliver an approval; closing it.`);
      session.fail('unavailable');
    }
    return session.snapshot();
  }

  private async answer(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const session = this.lookup(rpc);
    this.requireInteractive(session, 'input');
    const inputId = rpc.request.input_id ?? '';
    const view = session.closed ? undefined : session.pendingInput(inputId);
    if (!view) throw new EdgeStatusError('invalid_request', 'No such pending input for this turn.');
    const questions = view.questions ?? [];
    const given = rpc.request.answers ?? [];
    if (given.length !== questions.length)
      throw new EdgeStatusError('invalid_request', 'Answer every question once.');
    const answers = new Map<string, string>();
    for (const item of given) {
      const question = questions.find((candidate) => candidate.id === item.question_id);
      const answer = item.answers[0];
      if (
        !question ||
        answers.has(item.question_id) ||
        item.answers.length !== 1 ||
        answer === undefined ||
        !answer.trim()
      ) {
        throw new EdgeStatusError('invalid_request', 'Each question takes exactly one answer.');
      }
      const options = question.options ?? [];
      if (options.length > 0 && !question.is_other && !options.some((option) => option.label === answer)) {
        throw new EdgeStatusError('invalid_request', 'The answer is not one of the options.');
      }
      answers.set(item.question_id, answer);
    }
    const taken = session.takeInput(inputId, answers);
    if (!taken) throw new EdgeStatusError('invalid_request', 'No such pending input.');
    const native: Record<string, string[]> = {};
    for (const [questionId, answer] of answers) native[questionId] = [answer];
    try {
      await session.agent?.respondInput(taken.nativeId, native);
    } catch {
      this.log.warn(`Session ${session.id} could not deliver an answer; closing it.`);
      session.fail('unavailable');
    }
    return session.snapshot();
  }

  private permissions(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const session = this.lookup(rpc);
    return session.lock.run(async () => {
      this.requireInteractive(session, 'permissions');
      if (session.closed) throw new EdgeStatusError('session_closed', 'The session is closed.');
      if (session.running) throw new EdgeStatusError('busy', 'A turn is running.');
      const mode = rpc.request.permission_mode ?? '';
      if (!(PERMISSION_MODES as readonly string[]).includes(mode)) {
        throw new EdgeStatusError('invalid_request', 'Unknown permission mode.');
      }
      if (session.permissionMode !== mode) {
        session.permissionMode = mode as PermissionMode;
        session.changed();
      }
      return session.snapshot();
    });
  }

  // ---- models ----

  private requireIdleModels(session: LiveSession): AgentSession {
    const agent = session.agent;
    if (!agent?.capabilities.models)
      throw new EdgeStatusError('upgrade_required', 'The agent has no model catalog.');
    if (session.closed || session.running) throw new EdgeStatusError('busy', 'The session is not idle.');
    return agent;
  }

  private listModels(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const session = this.lookup(rpc);
    return session.lock.run(async () => {
      const agent = this.requireIdleModels(session);
      let models;
      try {
        models = await agent.listModels();
      } catch {
        throw new EdgeStatusError(
          session.closed ? 'session_closed' : 'unavailable',
          'The model catalog failed.',
        );
      }
      if (session.closed) throw new EdgeStatusError('session_closed', 'The session closed.');
      if (models.length > MODELS_MAX)
        throw new EdgeStatusError('unavailable', 'The model catalog is too large.');
      session.models = models;
      session.changed();
      return session.snapshot();
    });
  }

  private selectModel(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const session = this.lookup(rpc);
    return session.lock.run(async () => {
      this.requireIdleModels(session);
      const id = rpc.request.model ?? '';
      // Only ids from this session's own catalog: a client can never name an arbitrary model.
      if (!session.models?.some((model) => model.id === id)) {
        throw new EdgeStatusError('invalid_request', 'The model is not in this session catalog.');
      }
      if (session.selectedModel !== id) {
        session.selectedModel = id;
        session.changed();
      }
      return session.snapshot();
    });
  }

  // ---- management ----

  private rename(rpc: EdgeAgentRPCRequest): EdgeAgentResult {
    const session = this.lookup(rpc);
    const title = validTitle(rpc.request.title);
    if (!title) throw new EdgeStatusError('invalid_request', 'The title is not valid.');
    session.rename(title);
    return session.snapshot();
  }

  /** Forgets a closed session and its binding; a binding alone (after a restart) goes too. */
  private async remove(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const id = rpc.request.session_id ?? '';
    const access = rpc.request.access_id ?? '';
    const session = this.sessions.get(id);
    if (!session || session.owner !== rpc.actor_id || session.access !== access) {
      if (access && (await this.bindings.remove(rpc.actor_id, access, id))) return result('ok');
      throw new EdgeStatusError('not_found', 'No such session for this owner and access.');
    }
    if (!session.closed) throw new EdgeStatusError('busy', 'Stop the session first.');
    if (session.saved) await this.bindings.remove(session.owner, session.access, session.id);
    this.forget(session);
    return result('ok');
  }

  private discard(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    const session = this.lookup(rpc);
    return session.lock.run(async () => {
      this.lookup(rpc);
      if (session.running || !session.isEmpty) throw new EdgeStatusError('busy', 'The session has content.');
      let status: 'ok' | 'unavailable' = 'ok';
      try {
        await session.close('session_closed');
      } catch {
        status = 'unavailable';
      }
      // An empty session has nothing to resume (Codex does not even keep an unused thread).
      if (session.saved) {
        await this.bindings.remove(session.owner, session.access, session.id).catch(() => {
          status = 'unavailable';
          return false;
        });
      }
      this.forget(session);
      return result(status);
    });
  }
}
