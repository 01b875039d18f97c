// The edge's session manager: every edge_agent_v1 action after the envelope checks, dispatched to
// the handlers each action group registers (launch, read, turn, prompt, model, manage actions).
// Sessions are scoped by (owner, access, session); any mismatch is `not_found` (reference §2.3, §5).
import { join } from 'node:path';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  EDGE_AGENT_ACTIONS,
  EDGE_AGENT_INTERNAL_ACTIONS,
  FILE_ACTIONS,
  Limits,
  isOperationAction,
  result,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
  type Installation,
  type SessionUpdate,
} from '#contracts';
import { DriverError, type AgentDriver } from '../agent/agent-driver.js';
import { EdgeStatusError } from '../common/edge-errors.js';
import { FilesService } from '../files/files.service.js';
import { BindingStore, BindingStoreError } from './bindings.js';
import { DispatchOnce, dispatchActions } from './dispatch-once.js';
import { DISPATCH_RECORDS_FILE, DispatchRecordLog } from './dispatch-record-log.js';
import { DispatchRecords } from './dispatch-records.js';
import type { LiveSession } from './live-session.js';
import { manageActions } from './manage-actions.js';
import { modelActions } from './model-actions.js';
import { promptActions } from './prompt-actions.js';
import { readActions } from './read-actions.js';
import { requireFiles, toPublicStatus, type ActionHandler, type SessionsContext } from './session-context.js';
import { launchActions, SessionLauncher } from './session-launcher.js';
import { SessionRegistry } from './session-registry.js';
import { turnActions } from './turn-actions.js';
import type { SessionClock } from './turn-state.js';

export const AGENT_DRIVER = Symbol('AGENT_DRIVER');
export const SESSIONS_OPTIONS = Symbol('SESSIONS_OPTIONS');
export const SESSION_CHANGE_SINK = Symbol('SESSION_CHANGE_SINK');

/** The session part of a SessionUpdate; the publisher adds the edge's credentials. */
export type SessionChange = Omit<SessionUpdate, 'edge_id' | 'edge_token'>;

/** Receives a way to build the latest update of a session after each change (see updates/). */
export interface SessionChangeSink {
  changed(sessionId: string, build: () => SessionChange): void;
  /**
   * Whether the router has journaled `revision` (or a newer one) of the session, waiting up to
   * `timeoutMs` for an update still in flight. Without it, only the router's own word counts.
   */
  journaled?(sessionId: string, revision: number, timeoutMs: number): Promise<boolean>;
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

/** Actions of the contract this edge does not serve yet; clients learn it from the status. */
const NOT_YET_SERVED: ReadonlySet<string> = new Set(['transcript']);
const FILE_ACTION_SET: ReadonlySet<string> = new Set(FILE_ACTIONS);
const KNOWN_ACTIONS: ReadonlySet<string> = new Set([...EDGE_AGENT_ACTIONS, ...EDGE_AGENT_INTERNAL_ACTIONS]);

const systemClock: SessionClock = { monotonic: () => performance.now(), wall: () => Date.now() };

function changeOf(session: LiveSession): SessionChange {
  return {
    actor_id: session.owner,
    access_id: session.access || undefined,
    session_id: session.id,
    revision: session.revision,
    snapshot: session.snapshot(),
    emitted_at: session.updatedAt,
  };
}

@Injectable()
export class SessionsService {
  private readonly log = new Logger(SessionsService.name);
  /** The resume bindings of saved sessions (the file actions check them too). */
  readonly bindings: BindingStore;
  /** What became of each enveloped mutation, by its dispatch id (dispatch-records.ts). */
  readonly dispatches: DispatchRecords;
  private readonly registry: SessionRegistry;
  private readonly launcher: SessionLauncher;
  private readonly once: DispatchOnce;
  private readonly context: SessionsContext;
  private readonly handlers: ReadonlyMap<string, ActionHandler>;

  constructor(
    @Inject(AGENT_DRIVER) driver: AgentDriver,
    @Inject(SESSIONS_OPTIONS) options: SessionsOptions,
    @Inject(SESSION_CHANGE_SINK) private readonly sink: SessionChangeSink,
    /** directories, file_* and attachments; without it they answer `upgrade_required`. */
    @Optional() @Inject(FilesService) private readonly files?: FilesService,
  ) {
    const clock = options.clock ?? systemClock;
    this.bindings = new BindingStore(options.dataDir ?? null);
    this.dispatches = new DispatchRecords(
      () => clock.wall(),
      Limits.OPERATION_RETENTION_MS,
      options.dataDir
        ? new DispatchRecordLog(join(options.dataDir, DISPATCH_RECORDS_FILE), this.log)
        : undefined,
    );
    this.registry = new SessionRegistry(
      this.log,
      options.closedRetentionMs ?? Limits.CLOSED_SNAPSHOT_RETENTION_MS,
    );
    this.launcher = new SessionLauncher(
      driver,
      options,
      this.registry,
      this.bindings,
      { clock, changed: (session) => this.track(session), closed: (session) => this.onClosed(session) },
      this.log,
    );
    this.once = new DispatchOnce(this.dispatches, this.registry);
    this.context = {
      log: this.log,
      registry: this.registry,
      launcher: this.launcher,
      bindings: this.bindings,
      dispatches: this.dispatches,
      files,
      journaled: (sessionId, revision, timeoutMs) =>
        this.sink.journaled?.(sessionId, revision, timeoutMs) ?? Promise.resolve(false),
    };
    this.handlers = new Map(
      Object.entries({
        ...launchActions(this.context),
        ...readActions(this.context),
        ...turnActions(this.context),
        ...promptActions(this.context),
        ...modelActions(this.context),
        ...manageActions(this.context),
        ...dispatchActions(this.dispatches),
      }).filter((entry): entry is [string, ActionHandler] => entry[1] !== undefined),
    );
  }

  get liveSessions(): number {
    return this.registry.live;
  }

  get knownInstallations(): Installation[] {
    return this.launcher.knownInstallations;
  }

  /** Refreshes discovery when needed; a failure to find is `not_found`. */
  refreshInstallations(): Promise<Installation[]> {
    return this.launcher.refreshInstallations();
  }

  /** Closes every session (edge shutdown); their final states go to the publisher. */
  async shutdown(): Promise<void> {
    await this.registry.shutdown();
    this.dispatches.close();
  }

  /** One action of an already envelope-checked request. Never throws. */
  async handle(rpc: EdgeAgentRPCRequest, signal: AbortSignal): Promise<EdgeAgentResult> {
    try {
      if (rpc.dispatch_id && isOperationAction(rpc.request.action)) {
        return await this.once.run(rpc, rpc.dispatch_id, () => this.dispatch(rpc, signal));
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
    if (FILE_ACTION_SET.has(action)) return requireFiles(this.context).handle(rpc, this.registry.lookup(rpc));
    const handler = this.handlers.get(action);
    if (!handler) {
      throw new EdgeStatusError(
        'invalid_request',
        KNOWN_ACTIONS.has(action) ? `${action} is not handled.` : 'Unknown action.',
      );
    }
    return handler(rpc, signal);
  }

  private track(session: LiveSession): void {
    this.sink.changed(session.id, () => changeOf(session));
  }

  private onClosed(session: LiveSession): void {
    // Its transfers end and its attachment snapshots go with the runtime (reference §2.3).
    void this.files?.sessionClosed(session.id).catch(() => undefined);
    // Closed saved sessions answer polls for a day, then only history has them.
    if (session.saved) this.registry.retain(session);
  }
}
