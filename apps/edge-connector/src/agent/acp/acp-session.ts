// One live ACP session: one agent process (a spare or a fresh one) driving one native session.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Logger } from '@nestjs/common';
import type * as acp from '@agentclientprotocol/sdk';
import type { AgentModel } from '#contracts';
import {
  DriverError,
  type AgentSession,
  type ApprovalResponse,
  type DriverCapabilities,
  type OpenSessionOptions,
  type TurnInput,
} from '../agent-driver.js';
import { DriverSession } from '../driver-session.js';
import { imageFormat } from '../../files/images.js';
import { type AcpConnection, type CloseReason, type ConnectionSink } from './acp-connection.js';
import { AcpEventMapper, isObject, type JsonObject } from './acp-events.js';
import { LoadReplay } from './load-replay.js';
import { MODEL_ID_MAX_BYTES, MODELS_MAX } from '../model-catalog.js';
import {
  LOAD_REPLAY_MAX_MS,
  LOAD_REPLAY_QUIET_MS,
  PENDING_PERMISSIONS_MAX,
  PERMISSION_PARAMS_MAX_BYTES,
} from './acp-limits.js';
import { settled } from '../../common/settled.js';
import { AgentCallError, driverError } from '../agent-call.js';

/**
 * After `session/cancel` the agent must end the prompt with `cancelled` (Gemini CLI: 7 ms to 1.4 s).
 * One that does not within this time is stuck, and its session closes instead of hanging.
 */
const CANCEL_GRACE_MS = 10_000;
/** Distinct unknown update kinds logged per session; a flood of them logs once each, then nothing. */
const UNKNOWN_KINDS_LOGGED_MAX = 16;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;
/**
 * Images larger than this are not inlined: base64 adds a third and the prompt frame must stay under
 * the 2 MiB frame bound. The attachment note in the prompt text still names every file.
 */
const INLINE_IMAGE_MAX_BYTES = 1024 * 1024;
const CANCELLED: acp.RequestPermissionResponse = { outcome: { outcome: 'cancelled' } };

const STOP_STATUS: Record<string, 'completed' | 'failed' | 'interrupted'> = {
  end_turn: 'completed',
  max_tokens: 'completed',
  max_turn_requests: 'completed',
  refusal: 'failed',
  cancelled: 'interrupted',
};

interface PendingPermission {
  toolId: string;
  allowOnce: string;
  rejectOnce?: string;
  resolve: (response: acp.RequestPermissionResponse) => void;
}

/** The models an agent offers in `session/new` (ACP's `models` state), bounded and cleaned. */
function offeredModels(result: unknown): { models: AgentModel[]; current?: string } {
  const state = isObject(result) && isObject(result.models) ? result.models : undefined;
  const list = state && Array.isArray(state.availableModels) ? state.availableModels : [];
  const models: AgentModel[] = [];
  for (const entry of list.slice(0, MODELS_MAX)) {
    if (!isObject(entry) || typeof entry.modelId !== 'string') continue;
    const id = entry.modelId;
    if (!id || Buffer.byteLength(id) > MODEL_ID_MAX_BYTES || CONTROL_CHARS.test(id)) continue;
    if (models.some((model) => model.id === id)) continue;
    const name = typeof entry.name === 'string' && entry.name.length <= MODEL_ID_MAX_BYTES ? entry.name : id;
    models.push({ id, name: CONTROL_CHARS.test(name) ? id : name });
  }
  const current = state && typeof state.currentModelId === 'string' ? state.currentModelId : undefined;
  return { models, ...(current && models.some((model) => model.id === current) ? { current } : {}) };
}

export class AcpSession extends DriverSession implements AgentSession, ConnectionSink {
  readonly capabilities: DriverCapabilities;
  protected readonly log = new Logger(AcpSession.name);
  private readonly mapper: AcpEventMapper;
  private readonly pending = new Map<string, PendingPermission>();
  private readonly unknownKinds = new Set<string>();
  private sessionId = '';
  private models: AgentModel[] = [];
  /** The conversation `session/load` streams back, until it has gone quiet (load-replay.ts). */
  private replay: LoadReplay | undefined;
  private cancelTimer: NodeJS.Timeout | undefined;
  private permissionSeq = 0;

  private constructor(
    private readonly connection: AcpConnection,
    protected readonly options: OpenSessionOptions,
  ) {
    super();
    this.mapper = new AcpEventMapper(
      options.cwd,
      (event) => this.emit(event),
      (kind) => this.onUnknownKind(kind),
    );
    this.capabilities = {
      models: false,
      skills: false,
      permissions: false,
      approvals: true,
      input: false,
      // Attached files are named in the prompt text; images are also inlined where the agent takes them.
      attachments: true,
      resume: connection.loadSession,
    };
  }

  get threadId(): string {
    return this.sessionId;
  }
  override get agentVersion(): string | undefined {
    return this.connection.agentVersion;
  }
  /** The agent's process id (tests kill it to check supervision). */
  get pid(): number | undefined {
    return this.connection.pid;
  }

  /** Starts a native session on an initialized connection, or loads `options.threadId`. */
  static async open(connection: AcpConnection, options: OpenSessionOptions): Promise<AcpSession> {
    const session = new AcpSession(connection, options);
    connection.attach(session);
    try {
      await session.begin();
    } catch (error) {
      session.closing = true;
      await connection.kill();
      const failure = driverError(
        error,
        options.threadId ? 'resume_unavailable' : 'launch_failed',
        'the session start',
      );
      if (failure.status === 'session_closed') throw new DriverError('launch_failed', failure.message);
      throw failure;
    }
    session.ready = true;
    return session;
  }

  private async begin(): Promise<void> {
    const base = { cwd: this.options.cwd, mcpServers: [] };
    let result: unknown;
    if (this.options.threadId !== undefined) {
      // Never a silent fresh session: a failed load is the contract's `resume_unavailable`.
      if (!this.connection.loadSession)
        throw new DriverError('resume_unavailable', 'The agent cannot load sessions');
      try {
        result = await this.connection.call('session/load', { ...base, sessionId: this.options.threadId });
      } catch (error) {
        throw driverError(error, 'resume_unavailable', 'the session load');
      }
      this.sessionId = this.options.threadId;
      this.replay = new LoadReplay(LOAD_REPLAY_QUIET_MS, LOAD_REPLAY_MAX_MS);
    } else {
      result = await this.connection.call('session/new', base);
      const id = isObject(result) ? result.sessionId : undefined;
      if (typeof id !== 'string' || id.length === 0 || id.length > 128 || CONTROL_CHARS.test(id)) {
        throw new DriverError('launch_failed', 'The agent returned no session');
      }
      this.sessionId = id;
    }
    const offered = offeredModels(result);
    this.models = offered.models;
    this.currentModel = offered.current;
    this.capabilities.models = this.models.length > 0;
  }

  startTurn(input: TurnInput): Promise<{ turnId: string }> {
    this.assertOpen();
    if (this.mapper.currentTurn !== undefined) throw new DriverError('invalid_request', 'A turn is running');
    return this.dispatch(input);
  }

  private async dispatch(input: TurnInput): Promise<{ turnId: string }> {
    if (input.model && input.model !== this.currentModel) {
      try {
        await this.connection.call('session/set_model', { sessionId: this.sessionId, modelId: input.model });
      } catch (error) {
        throw driverError(error, 'unavailable', 'the model switch');
      }
      this.currentModel = input.model;
    }
    const turnId = randomUUID();
    this.mapper.beginTurn(turnId);
    // The first prompt after a load waits for the replay to end, or its tail would read as output.
    await this.replay?.quiet;
    // ACP has no "turn accepted" answer: the prompt answers only with the stop reason, so the turn
    // counts as dispatched once the request is handed to the agent's stdin.
    const blocks = await this.promptBlocks(input);
    const prompt = this.connection.call<acp.PromptResponse>(
      'session/prompt',
      { sessionId: this.sessionId, prompt: blocks },
      Number.POSITIVE_INFINITY,
    );
    void prompt.then(
      (result) => this.finishTurn(turnId, STOP_STATUS[String(result?.stopReason)] ?? 'failed'),
      (error: unknown) => {
        // A closed connection is reported by onClosed; anything else failed the turn alone.
        if (!(error instanceof AgentCallError && error.reason === 'closed'))
          this.finishTurn(turnId, 'failed');
      },
    );
    return { turnId };
  }

  private async promptBlocks(input: TurnInput): Promise<JsonObject[]> {
    const blocks: JsonObject[] = [{ type: 'text', text: input.text }];
    if (!this.connection.acceptsImages) return blocks;
    for (const file of input.images ?? []) {
      let data: Buffer;
      try {
        data = await readFile(file);
      } catch {
        continue; // The snapshot is gone; the prompt text still names the file.
      }
      const format = data.length <= INLINE_IMAGE_MAX_BYTES ? imageFormat(data) : undefined;
      if (format) blocks.push({ type: 'image', mimeType: `image/${format}`, data: data.toString('base64') });
    }
    return blocks;
  }

  private finishTurn(turnId: string, status: 'completed' | 'failed' | 'interrupted'): void {
    if (this.mapper.currentTurn !== turnId) return;
    clearTimeout(this.cancelTimer);
    this.cancelTimer = undefined;
    this.answerPending();
    this.mapper.endTurn();
    this.emit({ type: 'turn_completed', turnId, status });
  }

  async interrupt(turnId: string): Promise<void> {
    this.assertOpen();
    if (this.mapper.currentTurn !== turnId) return;
    // Pending permissions are answered `cancelled` first, as ACP asks of a cancelling client.
    this.answerPending();
    try {
      await this.connection.notify('session/cancel', { sessionId: this.sessionId });
    } catch (error) {
      throw driverError(error, 'unavailable', 'the interrupt');
    }
    this.cancelTimer ??= setTimeout(() => {
      if (this.mapper.currentTurn !== turnId || this.ended) return;
      this.log.warn(`ACP session ${this.sessionId} did not end a cancelled turn; closing it.`);
      this.onClosed('closed_by_client');
      void this.connection.stop();
    }, CANCEL_GRACE_MS);
  }

  respondApproval(nativeId: string | number, response: ApprovalResponse): Promise<void> {
    return settled(() => {
      this.assertOpen();
      const pending = this.pending.get(String(nativeId));
      if (!pending) throw new DriverError('invalid_request', 'No such pending request');
      this.pending.delete(String(nativeId));
      if (response === 'accept') {
        pending.resolve({ outcome: { outcome: 'selected', optionId: pending.allowOnce } });
        return;
      }
      // A declined call gets no update from Gemini CLI: the edge ends its activity itself.
      this.mapper.endTool(pending.toolId, 'declined');
      pending.resolve(
        pending.rejectOnce ? { outcome: { outcome: 'selected', optionId: pending.rejectOnce } } : CANCELLED,
      );
    });
  }

  respondInput(): Promise<void> {
    return Promise.reject(new DriverError('invalid_request', 'ACP agents ask no questions'));
  }

  listModels(): Promise<AgentModel[]> {
    this.assertOpen();
    return Promise.resolve([...this.models]);
  }

  async close(): Promise<void> {
    if (!this.closing) {
      this.closing = true;
      clearTimeout(this.cancelTimer);
      this.replay?.finish();
      this.answerPending();
    }
    await this.connection.stop();
  }

  // ---- from the agent ----

  onUpdate(update: JsonObject): void {
    if (this.replay?.replaying) {
      this.replay.touch();
      return;
    }
    if (!this.ready || this.ended) return;
    this.mapper.update(update);
  }

  onPermission(params: JsonObject): Promise<acp.RequestPermissionResponse> {
    const refuse = (why: string): Promise<acp.RequestPermissionResponse> => {
      this.log.warn(`Cancelled a permission request of ACP session ${this.sessionId || '(none)'}: ${why}`);
      return Promise.resolve(CANCELLED);
    };
    const turnId = this.mapper.currentTurn;
    if (!this.ready || this.ended || this.closing || turnId === undefined)
      return refuse('no turn is running');
    if (params.sessionId !== this.sessionId) return refuse('another session');
    if (this.pending.size >= PENDING_PERMISSIONS_MAX) return refuse('too many pending requests');
    if (Buffer.byteLength(JSON.stringify(params)) > PERMISSION_PARAMS_MAX_BYTES) return refuse('too large');
    const options = Array.isArray(params.options) ? params.options.filter(isObject) : [];
    const optionOf = (kind: string) =>
      options.find((option) => option.kind === kind && typeof option.optionId === 'string');
    const allowOnce = optionOf('allow_once')?.optionId as string | undefined;
    const rejectOnce = optionOf('reject_once')?.optionId as string | undefined;
    if (!this.options.saved) {
      // Transient sessions are never asked (reference §9.16): the call is declined outright.
      this.log.warn(`Declined a permission request of transient ACP session ${this.sessionId}.`);
      return Promise.resolve(
        rejectOnce ? { outcome: { outcome: 'selected', optionId: rejectOnce } } : CANCELLED,
      );
    }
    // Only a one-time grant can be given remotely; never an "always" rule.
    if (!allowOnce) return refuse('no allow-once option');
    const tool = isObject(params.toolCall) ? params.toolCall : undefined;
    const activity = tool && this.mapper.permissionActivity(tool);
    if (!activity) return refuse('no usable tool call');
    const nativeId = `permission-${++this.permissionSeq}`;
    const answer = new Promise<acp.RequestPermissionResponse>((resolve) => {
      this.pending.set(nativeId, {
        toolId: activity.id,
        allowOnce,
        ...(rejectOnce ? { rejectOnce } : {}),
        resolve,
      });
    });
    const { kind, command } = activity.state;
    const title = tool && typeof tool.title === 'string' ? tool.title : undefined;
    this.emit({
      type: 'approval_request',
      turnId,
      nativeId,
      kind: kind === 'fileChange' ? 'file_change' : 'command',
      itemId: activity.id,
      ...(kind === 'fileChange' ? {} : { command: command ?? title ?? '', cwd: this.options.cwd }),
    });
    return answer;
  }

  onClosed(reason: CloseReason): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.cancelTimer);
    this.replay?.finish();
    this.answerPending();
    if (this.closing || !this.ready) return;
    this.log.warn(`ACP session ${this.sessionId} ended: ${reason}`);
    this.emit({ type: 'closed', reason });
  }

  onUnknownKind(kind: string): void {
    if (this.unknownKinds.size >= UNKNOWN_KINDS_LOGGED_MAX || this.unknownKinds.has(kind)) return;
    this.unknownKinds.add(kind);
    // The kind is agent-chosen text: only its length is logged.
    this.log.warn(`ACP session ${this.sessionId} ignored an unknown update kind (${kind.length} chars).`);
  }

  /** Answers every open permission request `cancelled` and ends its activity. */
  private answerPending(): void {
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      this.mapper.endTool(pending.toolId, 'ended');
      this.emit({ type: 'request_resolved', nativeId: id });
      pending.resolve(CANCELLED);
    }
  }

  protected describe(): string {
    return `ACP session ${this.sessionId}`;
  }
}
