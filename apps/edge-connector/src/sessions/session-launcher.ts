// Discovery and the two ways a live session comes to be (reference §2.3 discover, start,
// resume): a new one, or a saved one relaunched from its binding with its history seed.
import { realpath } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import type { Logger } from '@nestjs/common';
import {
  Limits,
  result,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
  type Installation,
} from '#contracts';
import { DriverError, type AgentDriver, type AgentSession } from '../agent/agent-driver.js';
import { EdgeStatusError } from '../common/edge-errors.js';
import { hashId, randomId } from '../common/random.js';
import { BINDINGS_MAX, type BindingStore } from './bindings.js';
import { LiveSession, type LiveSessionInit, type SessionHooks, type SessionSkill } from './live-session.js';
import { checkBinding, checkResumeSeed, type RestoredDisplay } from './resume.js';
import { requireFiles, type ActionHandlers, type SessionsContext } from './session-context.js';
import type { SessionRegistry } from './session-registry.js';

export interface LaunchOptions {
  homeDir: string;
  /** True when the process runs as root and TETHER_EDGE_ALLOW_ROOT is not set. */
  unsupportedUser: boolean;
}

interface Resumed {
  threadId: string;
  display: RestoredDisplay;
}

type Refusal = 'busy' | 'unavailable' | 'resume_unavailable';

async function resolveDirectory(path: string): Promise<string> {
  if (!isAbsolute(path) || path.includes('\0'))
    throw new EdgeStatusError('invalid_request', 'The path must be absolute.');
  try {
    return await realpath(path);
  } catch {
    throw new EdgeStatusError('invalid_request', 'The path does not resolve.');
  }
}

/** A working directory must lie inside the home directory or the saved project (resolved, not `/`). */
async function workingDirectory(wantedPath: string, browseRoots: (string | undefined)[]): Promise<string> {
  const wanted = await resolveDirectory(wantedPath);
  const roots: string[] = [];
  for (const root of browseRoots) {
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
  return wanted;
}

async function loadSkills(agent: AgentSession): Promise<SessionSkill[] | null> {
  try {
    const skills = await agent.listSkills();
    return skills.map((info) => ({ id: hashId(info.name, info.path), info }));
  } catch {
    return null;
  }
}

export class SessionLauncher {
  private startsInFlight = 0;
  private installations: Installation[] = [];
  /** Session ids with a resume in flight: a second one is `busy`. */
  private readonly resuming = new Set<string>();

  constructor(
    private readonly driver: AgentDriver,
    private readonly options: LaunchOptions,
    private readonly registry: SessionRegistry,
    private readonly bindings: BindingStore,
    private readonly hooks: SessionHooks,
    private readonly log: Logger,
  ) {}

  get knownInstallations(): Installation[] {
    return this.installations;
  }

  requireSupportedUser(): void {
    if (this.options.unsupportedUser)
      throw new EdgeStatusError('unsupported_user', 'Agents do not run as root.');
  }

  async discover(): Promise<EdgeAgentResult> {
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

  async start(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    this.requireSupportedUser();
    const request = rpc.request;
    const project = await resolveDirectory(request.project ?? '');
    const projectRoot = rpc.project_root ? await resolveDirectory(rpc.project_root) : project;
    const cwd = request.working_directory
      ? await workingDirectory(request.working_directory, [this.options.homeDir, rpc.project_root])
      : project;
    const installation = await this.installation(request.installation_id);
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
   * Relaunches a saved session after its runtime ended (edge restart, stop, expiry) from its
   * binding, with the display state of the history seed (reference §2.3 resume).
   */
  async resume(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    this.requireSupportedUser();
    const display = checkResumeSeed(rpc);
    const id = rpc.request.session_id ?? '';
    const access = rpc.request.access_id ?? '';
    const live = this.registry.get(id);
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
      const init = {
        id,
        owner: rpc.actor_id,
        access,
        installation,
        cwd: bound.project,
        projectRoot: bound.access_project,
      };
      const session = await this.launch(init, { threadId: bound.thread, display });
      this.log.log(`Session ${id} resumed with ${installation.kind}.`);
      return session.snapshot();
    } finally {
      this.resuming.delete(id);
    }
  }

  /** A known installation, discovering again once when it is not known (yet). */
  private async installation(id: string | undefined): Promise<Installation> {
    let installation = this.installations.find((candidate) => candidate.id === id);
    if (!installation) {
      const fresh = await this.refreshInstallations().catch(() => []);
      installation = fresh.find((candidate) => candidate.id === id);
    }
    if (!installation) throw new EdgeStatusError('not_found', 'No such installation.');
    return installation;
  }

  /**
   * Opens the agent for a new live session and registers it; shared by start and resume. A new
   * saved session gets its binding persisted; if that fails, the agent is closed (`unavailable`).
   */
  private async launch(init: LiveSessionInit, resumed?: Resumed): Promise<LiveSession> {
    if (this.registry.live + this.startsInFlight >= Limits.EDGE_LIVE_SESSIONS_MAX) {
      throw new EdgeStatusError('busy', 'Live session capacity reached.');
    }
    this.startsInFlight += 1;
    try {
      const session = new LiveSession(init, this.hooks);
      if (resumed) session.restore(resumed.display);
      const agent = await this.open(session, init, resumed);
      const refuse = async (status: Refusal, why: string): Promise<EdgeStatusError> => {
        await agent.close().catch(() => undefined);
        return new EdgeStatusError(status, why);
      };
      if (resumed && !agent.capabilities.resume) {
        throw await refuse('resume_unavailable', 'The agent cannot resume.');
      }
      const other = this.registry.get(init.id);
      if (other && !other.closed) throw await refuse('busy', 'The session is already open.');
      if (session.saved && !resumed && !(await this.bind(init, agent))) {
        throw await refuse('unavailable', 'The resume binding could not be saved.');
      }
      session.attach(agent, agent.capabilities.skills ? await loadSkills(agent) : null);
      this.registry.add(session, other);
      this.hooks.changed(session);
      return session;
    } finally {
      this.startsInFlight -= 1;
    }
  }

  private async open(session: LiveSession, init: LiveSessionInit, resumed?: Resumed): Promise<AgentSession> {
    try {
      return await this.driver.open({
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
  }

  /** Persists the resume binding of a new saved session; false when it could not be saved. */
  private async bind(init: LiveSessionInit, agent: AgentSession): Promise<boolean> {
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
      return true;
    } catch {
      return false;
    }
  }
}

export function launchActions(context: SessionsContext): ActionHandlers {
  const { launcher } = context;
  return {
    directories: (rpc) => {
      launcher.requireSupportedUser();
      return requireFiles(context).directories(rpc);
    },
    discover: () => launcher.discover(),
    start: (rpc) => launcher.start(rpc),
    resume: (rpc) => launcher.resume(rpc),
  };
}
