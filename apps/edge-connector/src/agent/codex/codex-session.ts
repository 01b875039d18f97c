// One live Codex session: one `codex app-server` process driving one thread.
import { Logger } from '@nestjs/common';
import type { AgentModel } from '#contracts';
import {
  DriverError,
  type AgentEvent,
  type AgentSession,
  type ApprovalResponse,
  type DriverCapabilities,
  type OpenSessionOptions,
  type SkillInfo,
  type TurnInput,
} from '../agent-driver.js';
import { checkApproval, checkInputRequest, mapNotification } from './codex-events.js';
import {
  CALL_TIMEOUT_MS,
  CONFIG_OVERRIDES_MAX,
  HANDSHAKE_TIMEOUT_MS,
  MCP_STATUS_LIMIT,
  MODEL_ID_MAX_BYTES,
  MODEL_PAGE_SIZE,
  MODEL_PAGES_MAX,
  MODELS_MAX,
  SKILL_DESCRIPTION_MAX_CHARS,
  SKILL_NAME_MAX_CHARS,
  SKILL_PATH_MAX_BYTES,
  SKILLS_MAX,
} from './codex-limits.js';
import { CodexProcess, type LaunchSpec } from './codex-process.js';
import {
  JsonRpcConnection,
  RpcRejectedError,
  RpcUnavailableError,
  type CloseReason,
  type InboundMessage,
  type JsonObject,
  type RequestId,
} from './json-rpc.js';

/** How the edge introduces itself; `name` becomes the `originator` header Codex sends upstream. */
const CLIENT_INFO = { name: 'tether_edge', title: 'Tether Edge', version: '0.1.0' };
/** Stored in the rollout so threads started by Tether can be told apart. */
const SERVICE_NAME = 'tether';

const CAPABILITIES: DriverCapabilities = {
  models: true,
  skills: true,
  permissions: true,
  approvals: true,
  // Every thread turns on Codex's `default_mode_request_user_input` feature (see INPUT_FEATURE).
  input: true,
  attachments: true,
  resume: true,
};

const APPROVAL_METHODS = new Set([
  'item/commandExecution/requestApproval',
  'item/fileChange/requestApproval',
]);
const INPUT_METHOD = 'item/tool/requestUserInput';
const PERMISSIONS_METHOD = 'item/permissions/requestApproval';
/** JSON-RPC "method not found": the answer to server requests this client does not support. */
const METHOD_NOT_FOUND = -32601;
/**
 * Lets the agent ask the user (`item/tool/requestUserInput`) in ordinary turns. Without it Codex
 * asks only in Plan collaboration mode, which needs the experimental API and also changes how the
 * model works (it plans instead of acting); the edge has no plan mode to offer, so it keeps the
 * default mode and enables the questions alone. Checked against codex 0.171.
 */
const INPUT_FEATURE = 'features.default_mode_request_user_input';
/** A config key that can be addressed in a dotted override without ambiguity. */
const OVERRIDE_NAME = /^[^.\s\p{Cc}"'[\]]{1,128}$/u;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const requestKey = (id: RequestId): string => `${typeof id}:${id}`;

interface PendingServerRequest {
  id: RequestId;
  method: string;
  turnId: string;
}

/** Any failure of a call, as a contract status; the native error text never leaves the driver. */
function driverError(error: unknown, fallback: DriverError['status'], what: string): DriverError {
  if (error instanceof DriverError) return error;
  if (error instanceof RpcUnavailableError && error.reason === 'closed') {
    return new DriverError('session_closed', `The agent process ended during ${what}`);
  }
  if (error instanceof RpcUnavailableError && error.reason === 'timeout') {
    return new DriverError('unavailable', `The agent did not answer ${what} in time`);
  }
  if (error instanceof RpcRejectedError) return new DriverError(fallback, `The agent rejected ${what}`);
  return new DriverError(fallback, `The agent failed ${what}`);
}

export interface CodexSessionLaunch {
  spec: LaunchSpec;
  options: OpenSessionOptions;
}

export class CodexSession implements AgentSession {
  readonly capabilities = CAPABILITIES;
  private readonly logger = new Logger(CodexSession.name);
  private readonly pendingRequests = new Map<string, PendingServerRequest>();
  private rpc!: JsonRpcConnection;
  private process!: CodexProcess;
  private thread = '';
  private currentModel: string | undefined;
  private currentTitle: string | undefined;
  private version: string | undefined;
  private closing = false;
  private ended = false;
  /** Events that arrive before the thread is known are for nobody: drop them. */
  private ready = false;

  private constructor(private readonly options: OpenSessionOptions) {}

  get threadId(): string {
    return this.thread;
  }
  get model(): string | undefined {
    return this.currentModel;
  }
  get title(): string | undefined {
    return this.currentTitle;
  }
  get agentVersion(): string | undefined {
    return this.version;
  }
  /** The app-server's process id (tests kill it to check supervision). */
  get pid(): number | undefined {
    return this.process.pid;
  }
  /** The tail of the app-server's stderr, for local debugging only. */
  get diagnostics(): string {
    return this.process.diagnostics;
  }

  /** Launches the app-server, runs the handshake and preflight, then starts or resumes the thread. */
  static async open({ spec, options }: CodexSessionLaunch): Promise<CodexSession> {
    const session = new CodexSession(options);
    let proc: CodexProcess;
    try {
      proc = await CodexProcess.launch(spec);
    } catch {
      throw new DriverError('launch_failed', 'The Codex app-server could not be started');
    }
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
      await session.preflight();
      const overrides = await session.threadOverrides();
      await session.startThread(overrides);
      await session.verifyToolsDisabled();
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

  private async preflight(): Promise<void> {
    const result = await this.rpc.call<unknown>('account/read', { refreshToken: false }, CALL_TIMEOUT_MS);
    if (!isObject(result))
      throw new DriverError('launch_failed', 'The agent answered the account check badly');
    const ready = result.requiresOpenaiAuth !== true || isObject(result.account);
    if (!ready) throw new DriverError('authentication_required', 'Codex needs a sign-in on this machine');
  }

  /**
   * Per-thread overrides that turn off every integration the local config declares, so a remote
   * user never reaches the owner's apps, MCP servers or plugins [§3 threads]. Nothing else of the
   * local config is forwarded.
   */
  private async threadOverrides(): Promise<JsonObject> {
    let result: unknown;
    try {
      result = await this.rpc.call(
        'config/read',
        { cwd: this.options.cwd, includeLayers: false },
        CALL_TIMEOUT_MS,
      );
    } catch (error) {
      throw driverError(error, 'external_tools', 'the config read');
    }
    if (!isObject(result) || !isObject(result.config)) {
      throw new DriverError('external_tools', 'The agent config could not be read');
    }
    const overrides: JsonObject = { 'features.apps': false, [INPUT_FEATURE]: true };
    const names = (section: unknown): string[] => (isObject(section) ? Object.keys(section) : []);
    const mcp = names(result.config.mcp_servers);
    const plugins = names(result.config.plugins);
    if (mcp.length + plugins.length > CONFIG_OVERRIDES_MAX) {
      throw new DriverError('external_tools', 'Too many configured integrations to disable');
    }
    for (const [prefix, list] of [
      ['mcp_servers', mcp],
      ['plugins', plugins],
    ] as const) {
      for (const name of list) {
        if (!OVERRIDE_NAME.test(name)) {
          throw new DriverError('external_tools', `A configured ${prefix} entry cannot be disabled`);
        }
        overrides[`${prefix}.${name}.enabled`] = false;
      }
    }
    return overrides;
  }

  private async startThread(config: JsonObject): Promise<void> {
    const base = { cwd: this.options.cwd, sandbox: 'read-only', approvalPolicy: 'on-request', config };
    let result: unknown;
    if (this.options.threadId !== undefined) {
      try {
        result = await this.rpc.call(
          'thread/resume',
          { ...base, threadId: this.options.threadId, excludeTurns: true },
          CALL_TIMEOUT_MS,
        );
      } catch (error) {
        throw driverError(error, 'resume_unavailable', 'the thread resume');
      }
    } else {
      try {
        result = await this.rpc.call(
          'thread/start',
          { ...base, ephemeral: false, serviceName: SERVICE_NAME },
          CALL_TIMEOUT_MS,
        );
      } catch (error) {
        throw driverError(error, 'launch_failed', 'the thread start');
      }
    }
    const thread = isObject(result) && isObject(result.thread) ? result.thread : undefined;
    const id = thread && str(thread.id);
    if (!isObject(result) || !thread || !id)
      throw new DriverError('launch_failed', 'The agent returned no thread');
    if (this.options.threadId !== undefined && id !== this.options.threadId) {
      throw new DriverError('resume_unavailable', 'The agent resumed a different thread');
    }
    this.thread = id;
    this.currentModel = str(result.model) ?? str(thread.model);
    this.currentTitle = str(thread.name);
    this.version = str(thread.cliVersion);
  }

  /** Every MCP server must be disabled with no tools, on one page; otherwise refuse [§3 threads]. */
  private async verifyToolsDisabled(): Promise<void> {
    let result: unknown;
    try {
      result = await this.rpc.call(
        'mcpServerStatus/list',
        { threadId: this.thread, limit: MCP_STATUS_LIMIT },
        CALL_TIMEOUT_MS,
      );
    } catch (error) {
      throw driverError(error, 'external_tools', 'the integration check');
    }
    if (!isObject(result) || !Array.isArray(result.data) || (result.nextCursor ?? null) !== null) {
      throw new DriverError('external_tools', 'Integrations could not be proven disabled');
    }
    for (const server of result.data) {
      const disabled =
        isObject(server) &&
        server.runtimeStatus === 'disabled' &&
        (!isObject(server.tools) || Object.keys(server.tools).length === 0);
      if (!disabled) throw new DriverError('external_tools', 'An integration is still enabled');
    }
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

  async respondApproval(nativeId: string | number, response: ApprovalResponse): Promise<void> {
    const pending = this.takePending(nativeId, (method) => APPROVAL_METHODS.has(method));
    if (!this.rpc.respond(pending.id, { decision: response === 'accept' ? 'accept' : 'decline' })) {
      throw new DriverError('session_closed', 'The agent process has ended');
    }
  }

  async respondInput(nativeId: string | number, answers: Record<string, string[]>): Promise<void> {
    const pending = this.takePending(nativeId, (method) => method === INPUT_METHOD);
    const native: JsonObject = {};
    for (const [questionId, list] of Object.entries(answers)) native[questionId] = { answers: list };
    if (!this.rpc.respond(pending.id, { answers: native })) {
      throw new DriverError('session_closed', 'The agent process has ended');
    }
  }

  async listModels(): Promise<AgentModel[]> {
    this.assertOpen();
    const models: AgentModel[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MODEL_PAGES_MAX; page++) {
      let result: unknown;
      try {
        result = await this.rpc.call(
          'model/list',
          { limit: MODEL_PAGE_SIZE, includeHidden: false, ...(cursor ? { cursor } : {}) },
          CALL_TIMEOUT_MS,
        );
      } catch (error) {
        throw driverError(error, 'unavailable', 'the model list');
      }
      if (!isObject(result) || !Array.isArray(result.data))
        throw new DriverError('unavailable', 'The agent listed models badly');
      for (const entry of result.data) {
        if (!isObject(entry) || entry.hidden === true) continue;
        const id = str(entry.model) ?? str(entry.id);
        if (!id || Buffer.byteLength(id) > MODEL_ID_MAX_BYTES || CONTROL_CHARS.test(id) || seen.has(id))
          continue;
        seen.add(id);
        const display = str(entry.displayName);
        const name =
          display && display.length <= MODEL_ID_MAX_BYTES && !CONTROL_CHARS.test(display) ? display : id;
        models.push({ id, name });
        if (models.length > MODELS_MAX)
          throw new DriverError('unavailable', 'The agent lists too many models');
      }
      cursor = str(result.nextCursor) || undefined;
      if (!cursor) break;
    }
    return models;
  }

  async listSkills(): Promise<SkillInfo[]> {
    this.assertOpen();
    let result: unknown;
    try {
      result = await this.rpc.call(
        'skills/list',
        { cwds: [this.options.cwd], forceReload: true },
        CALL_TIMEOUT_MS,
      );
    } catch (error) {
      throw driverError(error, 'unavailable', 'the skill list');
    }
    if (!isObject(result) || !Array.isArray(result.data))
      throw new DriverError('unavailable', 'The agent listed skills badly');
    const group = result.data.find((entry) => isObject(entry) && entry.cwd === this.options.cwd);
    if (!isObject(group)) return [];
    if (Array.isArray(group.errors) && group.errors.length > 0) {
      throw new DriverError('unavailable', 'The agent could not load the skills of this directory');
    }
    const skills: SkillInfo[] = [];
    for (const skill of Array.isArray(group.skills) ? group.skills : []) {
      if (skills.length >= SKILLS_MAX) break;
      if (!isObject(skill) || skill.enabled !== true) continue;
      const name = str(skill.name);
      const skillPath = str(skill.path);
      const description = str(skill.description);
      if (!name || name.length > SKILL_NAME_MAX_CHARS) continue;
      if (!skillPath || !skillPath.startsWith('/') || Buffer.byteLength(skillPath) > SKILL_PATH_MAX_BYTES)
        continue;
      if (description !== undefined && description.length > SKILL_DESCRIPTION_MAX_CHARS) continue;
      skills.push({ name, path: skillPath, ...(description ? { description } : {}) });
    }
    return skills;
  }

  async close(): Promise<void> {
    if (this.closing) {
      await this.process.exited;
      return;
    }
    this.closing = true;
    this.pendingRequests.clear();
    const exit = this.process.stop();
    this.rpc.close('closed_by_client');
    await exit;
  }

  private assertOpen(): void {
    if (this.closing || this.ended) throw new DriverError('session_closed', 'The agent session has ended');
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

  private emit(event: AgentEvent): void {
    try {
      this.options.onEvent(event);
    } catch (error) {
      this.logger.error(`Event consumer of thread ${this.thread} threw: ${(error as Error).name}`);
    }
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
          this.logger.warn(
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
          this.logger.warn(
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
    this.logger.warn(`Codex session of thread ${this.thread || '(none)'} ended: ${reason}`);
    this.rpc.close(reason === 'process_exited' ? 'stream_ended' : reason);
    void this.process.stop();
    this.pendingRequests.clear();
    if (this.ready) this.emit({ type: 'closed', reason });
  }
}
