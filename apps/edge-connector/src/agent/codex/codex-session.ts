// One live Codex session: one `codex app-server` process driving one thread.
import { Logger } from '@nestjs/common';
import type { AgentModel } from '#contracts';
import {
  DriverError,
  type AgentSession,
  type ApprovalResponse,
  ALL_CAPABILITIES,
  type DriverCapabilities,
  type OpenSessionOptions,
  type SkillInfo,
  type TurnInput,
} from '../agent-driver.js';
import { checkApproval, checkInputRequest, mapNotification } from './codex-events.js';
import { listModels, listSkills } from './codex-catalogs.js';
import { CALL_TIMEOUT_MS, HANDSHAKE_TIMEOUT_MS } from './codex-limits.js';
import type { LaunchSpec } from '../child-launch.js';
import { ProcessDriverSession } from '../driver-session.js';
import { CodexProcess } from './codex-process.js';
import {
  isObject,
  preflight,
  startThread,
  str,
  threadOverrides,
  verifyToolsDisabled,
} from './codex-thread.js';
import {
  JsonRpcConnection,
  type CloseReason,
  type InboundMessage,
  type JsonObject,
  type RequestId,
} from './json-rpc.js';
import { settled } from '../../common/settled.js';
import { driverError } from '../agent-call.js';

/** How the edge introduces itself; `name` becomes the `originator` header Codex sends upstream. */
const CLIENT_INFO = { name: 'tether_edge', title: 'Tether Edge', version: '0.1.0' };

// `input` too: every thread turns on Codex's `default_mode_request_user_input` feature (see
// codex-thread.ts).
const CAPABILITIES: DriverCapabilities = { ...ALL_CAPABILITIES };

const APPROVAL_METHODS = new Set([
  'item/commandExecution/requestApproval',
  'item/fileChange/requestApproval',
]);
const INPUT_METHOD = 'item/tool/requestUserInput';
const PERMISSIONS_METHOD = 'item/permissions/requestApproval';
/** JSON-RPC "method not found": the answer to server requests this client does not support. */
const METHOD_NOT_FOUND = -32601;
const requestKey = (id: RequestId): string => `${typeof id}:${id}`;

interface PendingServerRequest {
  id: RequestId;
  method: string;
  turnId: string;
}

export interface CodexSessionLaunch {
  spec: LaunchSpec;
  options: OpenSessionOptions;
}

export class CodexSession extends ProcessDriverSession implements AgentSession {
  readonly capabilities = CAPABILITIES;
  protected readonly log = new Logger(CodexSession.name);
  private readonly pendingRequests = new Map<string, PendingServerRequest>();
  private rpc!: JsonRpcConnection;
  private thread = '';
  private currentTitle: string | undefined;

  private constructor(protected readonly options: OpenSessionOptions) {
    super();
  }

  get threadId(): string {
    return this.thread;
  }
  override get title(): string | undefined {
    return this.currentTitle;
  }

  /** Launches the app-server, runs the handshake and preflight, then starts or resumes the thread. */
  static async open({ spec, options }: CodexSessionLaunch): Promise<CodexSession> {
    const session = new CodexSession(options);
    const proc = await CodexProcess.launch(spec, 'The Codex app-server could not be started');
    session.process = proc;
    session.rpc = new JsonRpcConnection({
      input: proc.child.stdout,
      output: proc.child.stdin,
      onMessage: (message) => session.onMessage(message),
      onClose: (reason) => session.onConnectionClosed(reason),
    });
    void proc.exited.then(() => session.onConnectionClosed('process_exited'));
    try {
      await session.handshake();
      await preflight(session.rpc);
      const overrides = await threadOverrides(session.rpc, options.cwd);
      const thread = await startThread(session.rpc, options, overrides);
      session.thread = thread.id;
      session.currentModel = thread.model;
      session.currentTitle = thread.title;
      session.version = thread.version;
      await verifyToolsDisabled(session.rpc, session.thread);
    } catch (error) {
      session.closing = true;
      session.rpc.close('closed_by_client');
      await proc.kill();
      const failure = driverError(error, 'launch_failed', 'the session start');
      // A process that dies before the session exists failed to launch; nothing was closed.
      if (failure.status === 'session_closed') throw new DriverError('launch_failed', failure.message);
      throw failure;
    }
    session.ready = true;
    return session;
  }

  private async handshake(): Promise<void> {
    try {
      await this.rpc.call(
        'initialize',
        { clientInfo: CLIENT_INFO, capabilities: { experimentalApi: false, requestAttestation: false } },
        HANDSHAKE_TIMEOUT_MS,
      );
    } catch (error) {
      throw driverError(error, 'launch_failed', 'the handshake');
    }
    if (!this.rpc.notify('initialized'))
      throw new DriverError('launch_failed', 'The agent closed during the handshake');
  }

  async startTurn(input: TurnInput): Promise<{ turnId: string }> {
    this.assertOpen();
    const items: JsonObject[] = [{ type: 'text', text: input.text, text_elements: [] }];
    if (input.skill) items.push({ type: 'skill', name: input.skill.name, path: input.skill.path });
    for (const image of input.images ?? []) items.push({ type: 'localImage', path: image });
    const sandboxPolicy =
      input.permissionMode === 'workspace-write'
        ? {
            type: 'workspaceWrite',
            writableRoots: [this.options.cwd],
            networkAccess: false,
            excludeTmpdirEnvVar: true,
            excludeSlashTmp: true,
          }
        : { type: 'readOnly', networkAccess: false };
    let result: unknown;
    try {
      result = await this.rpc.call(
        'turn/start',
        {
          threadId: this.thread,
          input: items,
          approvalPolicy: 'on-request',
          sandboxPolicy,
          ...(input.model ? { model: input.model } : {}),
        },
        CALL_TIMEOUT_MS,
      );
    } catch (error) {
      throw driverError(error, 'unavailable', 'the turn');
    }
    const turnId = isObject(result) && isObject(result.turn) ? str(result.turn.id) : undefined;
    if (!turnId) throw new DriverError('unavailable', 'The agent returned no turn');
    if (input.model) this.currentModel = input.model;
    return { turnId };
  }

  async interrupt(turnId: string): Promise<void> {
    this.assertOpen();
    try {
      await this.rpc.call('turn/interrupt', { threadId: this.thread, turnId }, CALL_TIMEOUT_MS);
    } catch (error) {
      throw driverError(error, 'unavailable', 'the interrupt');
    }
  }

  respondApproval(nativeId: string | number, response: ApprovalResponse): Promise<void> {
    return settled(() => {
      const pending = this.takePending(nativeId, (method) => APPROVAL_METHODS.has(method));
      if (!this.rpc.respond(pending.id, { decision: response === 'accept' ? 'accept' : 'decline' })) {
        throw new DriverError('session_closed', 'The agent process has ended');
      }
    });
  }

  respondInput(nativeId: string | number, answers: Record<string, string[]>): Promise<void> {
    return settled(() => {
      const pending = this.takePending(nativeId, (method) => method === INPUT_METHOD);
      const native: JsonObject = {};
      for (const [questionId, list] of Object.entries(answers)) native[questionId] = { answers: list };
      if (!this.rpc.respond(pending.id, { answers: native })) {
        throw new DriverError('session_closed', 'The agent process has ended');
      }
    });
  }

  async listModels(): Promise<AgentModel[]> {
    this.assertOpen();
    return listModels(this.rpc);
  }

  override async listSkills(): Promise<SkillInfo[]> {
    this.assertOpen();
    return listSkills(this.rpc, this.options.cwd);
  }

  protected closeTransport(): void {
    this.pendingRequests.clear();
    this.rpc.close('closed_by_client');
  }

  protected describe(): string {
    return `thread ${this.thread}`;
  }

  private takePending(nativeId: RequestId, accepts: (method: string) => boolean): PendingServerRequest {
    this.assertOpen();
    const key = requestKey(nativeId);
    const pending = this.pendingRequests.get(key);
    if (!pending || !accepts(pending.method)) {
      throw new DriverError('invalid_request', 'No such pending request');
    }
    this.pendingRequests.delete(key);
    return pending;
  }

  private onMessage(message: InboundMessage): void {
    if (message.kind === 'request') {
      this.onServerRequest(message.id, message.method, message.params);
      return;
    }
    if (!this.ready) return;
    for (const event of mapNotification(message.method, message.params, this.thread)) {
      if (event.type === 'request_resolved') this.pendingRequests.delete(requestKey(event.nativeId));
      if (event.type === 'turn_completed') {
        for (const [key, pending] of this.pendingRequests) {
          if (pending.turnId === event.turnId) this.pendingRequests.delete(key);
        }
      }
      if (event.type === 'title') this.currentTitle = event.title;
      this.emit(event);
    }
  }

  private onServerRequest(id: RequestId, method: string, params: JsonObject): void {
    const key = requestKey(id);
    if (APPROVAL_METHODS.has(method)) {
      const check = checkApproval(method, id, params, this.thread);
      // Only saved-access sessions may be asked; the rest fail closed [§3 approvals].
      if (!this.ready || !this.options.saved || !check.ok || this.pendingRequests.has(key)) {
        if (!this.pendingRequests.has(key)) {
          this.log.warn(
            `Declined an approval request of thread ${this.thread}: ${check.ok ? 'not allowed' : check.reason}`,
          );
          this.answerOrStop(this.rpc.respond(id, { decision: 'decline' }));
        }
        return;
      }
      this.pendingRequests.set(key, { id, method, turnId: check.event.turnId });
      this.emit(check.event);
      return;
    }
    if (method === INPUT_METHOD) {
      const check = checkInputRequest(id, params, this.thread);
      if (!this.ready || !this.options.saved || !check.ok || this.pendingRequests.has(key)) {
        if (!this.pendingRequests.has(key)) {
          this.log.warn(
            `Refused an input request of thread ${this.thread}: ${check.ok ? 'not allowed' : check.reason}`,
          );
          this.answerOrStop(this.rpc.respondError(id, METHOD_NOT_FOUND, 'input request refused'));
        }
        return;
      }
      this.pendingRequests.set(key, { id, method, turnId: check.event.turnId });
      this.emit(check.event);
      return;
    }
    if (method === PERMISSIONS_METHOD) {
      // Extra permissions are never granted remotely: an empty grant for this turn.
      this.answerOrStop(this.rpc.respond(id, { permissions: {}, scope: 'turn' }));
      return;
    }
    this.answerOrStop(this.rpc.respondError(id, METHOD_NOT_FOUND, 'unsupported request'));
  }

  /** A server request that cannot even be refused leaves the turn hanging: end the session. */
  private answerOrStop(sent: boolean): void {
    if (!sent) this.rpc.close('write_failed');
  }

  private onConnectionClosed(reason: CloseReason | 'process_exited'): void {
    if (this.ended) return;
    this.ended = true;
    if (this.closing) return;
    this.log.warn(`Codex session of thread ${this.thread || '(none)'} ended: ${reason}`);
    this.rpc.close(reason === 'process_exited' ? 'stream_ended' : reason);
    void this.process.stop();
    this.pendingRequests.clear();
    if (this.ready) this.emit({ type: 'closed', reason });
  }
}
