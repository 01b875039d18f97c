// One live Claude Code session: one `claude -p` stream-json process driving one conversation.
import { Logger } from '@nestjs/common';
import type { AgentModel } from '#contracts';
import {
  DriverError,
  type AgentSession,
  type ApprovalResponse,
  type DriverCapabilities,
  type OpenSessionOptions,
  type TurnInput,
} from '../agent-driver.js';
import type { LaunchSpec } from '../child-launch.js';
import { ProcessDriverSession } from '../driver-session.js';
import { CodexProcess } from '../codex/codex-process.js';
import { ClaudeTurns } from './claude-turns.js';
import { CONTROL_TIMEOUT_MS, HANDSHAKE_TIMEOUT_MS } from './claude-limits.js';
import { ClaudeStream, type StreamCloseReason } from './claude-stream.js';
import { isObject, str } from './claude-events.js';
import { ModelCatalog } from '../model-catalog.js';
import { settled } from '../../common/settled.js';
import { driverError } from '../agent-call.js';

/** Attachments, skills and `permissions` are not offered for Claude, as in the reference [§3]. */
const CAPABILITIES: DriverCapabilities = {
  models: true,
  skills: false,
  permissions: false,
  approvals: true,
  input: true,
  attachments: false,
  resume: true,
};

/**
 * Signed in when the CLI names a source for its key or token, or a provider other than
 * Anthropic's own (Bedrock, Vertex: their credentials are the cloud's).
 */
function signedIn(account: unknown): boolean {
  if (!isObject(account)) return false;
  const source = (value: unknown): boolean => typeof value === 'string' && value !== '' && value !== 'none';
  return (
    source(account.apiKeySource) ||
    source(account.tokenSource) ||
    (typeof account.apiProvider === 'string' && account.apiProvider !== 'firstParty')
  );
}

/** The catalog `initialize` returns, bounded and cleaned like the Codex catalog [§3 catalogs]. */
function catalog(raw: unknown): { models: AgentModel[]; defaultModel?: string } {
  if (!Array.isArray(raw)) return { models: [] };
  const catalog = new ModelCatalog();
  let defaultModel: string | undefined;
  for (const entry of raw) {
    if (!isObject(entry)) continue;
    const id = str(entry.value);
    if (catalog.add(id, str(entry.displayName)) && id === 'default') defaultModel = str(entry.resolvedModel);
  }
  return { models: catalog.models, ...(defaultModel ? { defaultModel } : {}) };
}

export interface ClaudeSessionLaunch {
  spec: LaunchSpec;
  options: OpenSessionOptions;
  /** The conversation id: asked for with `--session-id`, or resumed with `--resume`. */
  sessionId: string;
}

export class ClaudeSession extends ProcessDriverSession implements AgentSession {
  readonly capabilities = CAPABILITIES;
  protected readonly log = new Logger(ClaudeSession.name);
  private stream!: ClaudeStream;
  private turns!: ClaudeTurns;
  private models: AgentModel[] = [];

  private constructor(
    protected readonly options: OpenSessionOptions,
    private readonly sessionId: string,
  ) {
    super();
  }

  get threadId(): string {
    return this.sessionId;
  }

  /** Launches `claude`, runs `initialize` and the sign-in check; resumes when options.threadId is set. */
  static async open({ spec, options, sessionId }: ClaudeSessionLaunch): Promise<ClaudeSession> {
    const session = new ClaudeSession(options, sessionId);
    const resuming = options.threadId !== undefined;
    const proc = await CodexProcess.launch(spec, 'Claude Code could not be started');
    session.process = proc;
    session.turns = new ClaudeTurns({
      sessionId,
      cwd: options.cwd,
      saved: options.saved,
      emit: (event) => session.emit(event),
      respond: (id, response) => session.answer(session.stream.respond(id, response)),
      refuse: (id) => session.answer(session.stream.respondError(id, 'unsupported request')),
      foreign: () => session.stream.close('foreign_session'),
    });
    session.stream = new ClaudeStream({
      input: proc.child.stdout,
      output: proc.child.stdin,
      onMessage: (message) => {
        if (session.ready) session.turns.onMessage(message);
      },
      onClose: (reason) => session.onStreamClosed(reason),
    });
    void proc.exited.then(() => session.onStreamClosed('stream_ended'));
    try {
      const init = await session.stream.control({ subtype: 'initialize' }, HANDSHAKE_TIMEOUT_MS);
      if (!signedIn(init.account)) {
        throw new DriverError(
          'authentication_required',
          'Claude Code needs an API key or a sign-in on this machine',
        );
      }
      const found = catalog(init.models);
      session.models = found.models;
      session.currentModel = found.defaultModel;
      session.version = str(init.claude_code_version);
    } catch (error) {
      session.closing = true;
      session.stream.close('closed_by_client');
      await proc.kill();
      const failure = driverError(error, 'launch_failed', 'the session start');
      // The CLI exits at once when it has no conversation to resume.
      if (failure.status === 'session_closed') {
        throw new DriverError(resuming ? 'resume_unavailable' : 'launch_failed', failure.message);
      }
      throw failure;
    }
    session.ready = true;
    return session;
  }

  async startTurn(input: TurnInput): Promise<{ turnId: string }> {
    this.assertOpen();
    if (input.model && input.model !== this.currentModel) {
      try {
        await this.stream.control({ subtype: 'set_model', model: input.model }, CONTROL_TIMEOUT_MS);
      } catch (error) {
        throw driverError(error, 'unavailable', 'the model switch');
      }
      this.currentModel = input.model;
    }
    const turnId = this.turns.begin();
    if (!(await this.stream.sendUser(input.text))) {
      this.turns.abandon(turnId);
      throw new DriverError('unavailable', 'The turn could not be sent to the agent');
    }
    return { turnId };
  }

  async interrupt(turnId: string): Promise<void> {
    this.assertOpen();
    if (!this.turns.interrupting(turnId)) return;
    try {
      await this.stream.control({ subtype: 'interrupt' }, CONTROL_TIMEOUT_MS);
    } catch (error) {
      throw driverError(error, 'unavailable', 'the interrupt');
    }
  }

  respondApproval(nativeId: string | number, response: ApprovalResponse): Promise<void> {
    return settled(() => {
      this.assertOpen();
      if (!this.turns.answerApproval(nativeId, response)) throw this.answerError();
    });
  }

  respondInput(nativeId: string | number, answers: Record<string, string[]>): Promise<void> {
    return settled(() => {
      this.assertOpen();
      if (!this.turns.answerQuestion(nativeId, answers)) throw this.answerError();
    });
  }

  listModels(): Promise<AgentModel[]> {
    return settled(() => {
      this.assertOpen();
      return this.models.map((model) => ({ ...model }));
    });
  }

  protected closeTransport(): void {
    this.stream.close('closed_by_client');
  }

  protected describe(): string {
    return `Claude session ${this.sessionId}`;
  }

  /** An answer that was not sent: the question was not pending, or the process is gone. */
  private answerError(): DriverError {
    return this.ended
      ? new DriverError('session_closed', 'The agent process has ended')
      : new DriverError('invalid_request', 'No such pending request');
  }

  /** An answer that cannot be written leaves the turn hanging: end the session. */
  private answer(sent: boolean): boolean {
    if (!sent) this.stream.close('write_failed');
    return sent;
  }

  private onStreamClosed(reason: StreamCloseReason): void {
    if (this.ended) return;
    this.ended = true;
    if (this.closing) return;
    // Before `ready` the failure is the open's own error; after it, the session learns it here.
    if (this.ready) this.log.warn(`Claude session ${this.sessionId} ended: ${reason}`);
    this.stream.close(reason);
    // A CLI that broke the protocol gets no graceful exit: its output can no longer be trusted.
    void (reason === 'stream_ended' ? this.process.stop() : this.process.kill());
    if (this.ready) this.emit({ type: 'closed', reason });
  }
}
