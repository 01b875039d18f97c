// The turn state of one Claude Code session: maps stream-json messages of the running turn to
// neutral events, and keeps the permission questions (Bash approvals, AskUserQuestion) open until
// the edge answers them. Claude Code has no turn ids; the edge numbers its own turns, and the
// `result` line that ends a turn is the turn's completion.
import { Logger } from '@nestjs/common';
import type { AgentEvent, ApprovalResponse } from '../agent-driver.js';
import {
  BASH_TOOL,
  QUESTION_TOOL,
  bashExitCode,
  checkBashApproval,
  checkQuestions,
  isObject,
  str,
  toolResultText,
  toolStarted,
  validNativeId,
} from './claude-events.js';
import { PENDING_APPROVALS_MAX, TOOLS_PER_TURN_MAX } from './claude-limits.js';
import type { JsonObject } from './claude-stream.js';

/** What Claude Code is told when the edge or the user says no; the model reads it. */
const DECLINED = 'The user declined this action.';
const NOT_ALLOWED = 'This action cannot be approved from a remote session.';
const NOT_ANSWERED = 'The user did not answer.';

interface PendingQuestion {
  kind: 'approval' | 'input';
  turnId: string;
  toolUseId: string;
  input: JsonObject;
  /** Input cards: card question id → Claude's question text. */
  texts?: Map<string, string>;
}

export interface ClaudeTurnsOptions {
  /** The conversation id; messages of any other conversation are ignored. */
  sessionId: string;
  cwd: string;
  saved: boolean;
  emit: (event: AgentEvent) => void;
  /** Answers a permission question; false when the stream is gone. */
  respond: (requestId: string, response: JsonObject) => boolean;
  /** Refuses a control request this client does not serve. */
  refuse: (requestId: string) => boolean;
  /** The CLI reports another conversation than the one the binding names: the session must end. */
  foreign: () => void;
}

export class ClaudeTurns {
  private readonly log = new Logger(ClaudeTurns.name);
  private readonly pending = new Map<string, PendingQuestion>();
  /** Tools of the current turn, so their results can be told apart from other content. */
  private readonly tools = new Map<string, string>();
  private readonly declined = new Set<string>();
  private counter = 0;
  private turnId: string | undefined;
  private interrupted = false;
  private messageId = '';

  constructor(private readonly options: ClaudeTurnsOptions) {}

  /** Starts a turn and returns its id; Claude Code answers one user message at a time. */
  begin(): string {
    this.counter += 1;
    this.turnId = `turn-${this.counter}`;
    this.interrupted = false;
    this.messageId = '';
    this.tools.clear();
    this.declined.clear();
    return this.turnId;
  }

  /** The user message could not be written: the turn never started. */
  abandon(turnId: string): void {
    if (this.turnId === turnId) this.turnId = undefined;
  }

  /** Marks the running turn as interrupted; false when `turnId` is not the running turn. */
  interrupting(turnId: string): boolean {
    if (this.turnId !== turnId) return false;
    this.interrupted = true;
    return true;
  }

  onMessage(message: JsonObject): void {
    if (message.type === 'control_request') {
      this.onControlRequest(message);
      return;
    }
    if (message.type === 'control_cancel_request') {
      const requestId = str(message.request_id);
      if (requestId && this.pending.delete(requestId)) {
        this.options.emit({ type: 'request_resolved', nativeId: requestId });
      }
      return;
    }
    if (
      message.type === 'system' &&
      message.subtype === 'init' &&
      message.session_id !== this.options.sessionId
    ) {
      // Resume goes by the id the CLI reports; a session that is not the bound one cannot be kept.
      this.options.foreign();
      return;
    }
    const turnId = this.turnId;
    if (turnId === undefined) return;
    if (message.session_id !== undefined && message.session_id !== this.options.sessionId) return;
    switch (message.type) {
      case 'stream_event':
        this.onStreamEvent(turnId, message);
        return;
      case 'assistant':
        this.onAssistant(turnId, message);
        return;
      case 'user':
        this.onToolResults(turnId, message);
        return;
      case 'result':
        this.onResult(turnId, message);
        return;
      default:
        return;
    }
  }

  /** Streamed text of the main conversation; subagents' text stays inside their tool. */
  private onStreamEvent(turnId: string, message: JsonObject): void {
    if (message.parent_tool_use_id !== null && message.parent_tool_use_id !== undefined) return;
    const event = isObject(message.event) ? message.event : undefined;
    if (!event) return;
    if (event.type === 'message_start' && isObject(event.message)) {
      this.messageId = str(event.message.id) ?? `message-${this.counter}`;
      return;
    }
    if (event.type !== 'content_block_delta' || !isObject(event.delta) || event.delta.type !== 'text_delta')
      return;
    const text = str(event.delta.text);
    const index = typeof event.index === 'number' ? event.index : 0;
    if (text)
      this.options.emit({ type: 'message_delta', turnId, itemId: `${this.messageId}:${index}`, text });
  }

  /** A complete assistant message: its tool calls become running activities. */
  private onAssistant(turnId: string, message: JsonObject): void {
    const content = isObject(message.message) ? message.message.content : undefined;
    if (!Array.isArray(content)) return;
    for (const block of content) {
      if (!isObject(block) || block.type !== 'tool_use' || !validNativeId(block.id)) continue;
      if (this.tools.size >= TOOLS_PER_TURN_MAX) return;
      const name = str(block.name) ?? '';
      this.tools.set(block.id, name);
      const activity = toolStarted(block.id, name, block.input, this.options.cwd);
      if (activity) this.options.emit({ type: 'activity', turnId, activity });
    }
  }

  /** Tool results come back as a user message; each one finishes its activity. */
  private onToolResults(turnId: string, message: JsonObject): void {
    const content = isObject(message.message) ? message.message.content : undefined;
    if (!Array.isArray(content)) return;
    for (const block of content) {
      if (!isObject(block) || block.type !== 'tool_result') continue;
      const id = block.tool_use_id;
      if (!validNativeId(id) || !this.tools.has(id)) continue;
      const name = this.tools.get(id)!;
      const activity = toolStarted(id, name, undefined, this.options.cwd);
      if (!activity) continue;
      const isError = block.is_error === true;
      activity.status = this.declined.has(id) ? 'declined' : isError ? 'failed' : 'completed';
      if (name === BASH_TOOL && activity.status !== 'declined') {
        const output = toolResultText(block.content);
        activity.output = output;
        activity.exitCode = bashExitCode(isError, output);
      }
      this.options.emit({ type: 'activity', turnId, activity });
    }
  }

  private onResult(turnId: string, message: JsonObject): void {
    const ok = message.subtype === 'success' && message.is_error !== true;
    const status = this.interrupted ? 'interrupted' : ok ? 'completed' : 'failed';
    this.turnId = undefined;
    for (const [requestId, question] of this.pending) {
      if (question.turnId === turnId) this.pending.delete(requestId);
    }
    this.options.emit({ type: 'turn_completed', turnId, status });
  }

  private onControlRequest(message: JsonObject): void {
    const requestId = str(message.request_id);
    if (!requestId) return;
    const request = isObject(message.request) ? message.request : {};
    if (request.subtype !== 'can_use_tool') {
      this.options.refuse(requestId);
      return;
    }
    // The CLI repeating a question it already asked changes nothing.
    if (this.pending.has(requestId)) return;
    const toolUseId = request.tool_use_id;
    const toolName = str(request.tool_name);
    const input = isObject(request.input) ? request.input : {};
    const turnId = this.turnId;
    const refusal = this.refusal(toolName);
    if (refusal || turnId === undefined || !validNativeId(toolUseId)) {
      this.deny(requestId, toolUseId, NOT_ALLOWED, refusal ?? 'tool_invalid');
      return;
    }
    if (toolName === BASH_TOOL) this.askApproval(requestId, turnId, toolUseId, input);
    else this.askQuestion(requestId, turnId, toolUseId, input);
  }

  /** Why a permission question is denied without asking anyone (fail closed, reference §3 approvals). */
  private refusal(toolName: string | undefined): string | undefined {
    if (!this.options.saved) return 'transient_session';
    if (this.turnId === undefined) return 'no_turn';
    if (this.pending.size >= PENDING_APPROVALS_MAX) return 'too_many_pending';
    if (toolName !== BASH_TOOL && toolName !== QUESTION_TOOL) return 'tool_not_remote';
    return undefined;
  }

  private askApproval(requestId: string, turnId: string, toolUseId: string, input: JsonObject): void {
    const check = checkBashApproval(input);
    if (!check.ok) {
      this.deny(requestId, toolUseId, NOT_ALLOWED, check.reason);
      return;
    }
    this.pending.set(requestId, { kind: 'approval', turnId, toolUseId, input });
    this.options.emit({
      type: 'approval_request',
      turnId,
      nativeId: requestId,
      kind: 'command',
      itemId: toolUseId,
      command: check.command,
      cwd: this.options.cwd,
      ...(check.reason ? { reason: check.reason } : {}),
    });
  }

  private askQuestion(requestId: string, turnId: string, toolUseId: string, input: JsonObject): void {
    const check = checkQuestions(input);
    if (!check.ok) {
      this.deny(requestId, toolUseId, NOT_ALLOWED, check.reason);
      return;
    }
    this.pending.set(requestId, { kind: 'input', turnId, toolUseId, input, texts: check.texts });
    this.options.emit({
      type: 'input_request',
      turnId,
      nativeId: requestId,
      itemId: toolUseId,
      questions: check.questions,
    });
  }

  private deny(requestId: string, toolUseId: unknown, message: string, why: string): void {
    if (why !== 'answered')
      this.log.warn(`Denied a permission question of Claude session ${this.options.sessionId}: ${why}`);
    if (validNativeId(toolUseId) && this.declined.size < TOOLS_PER_TURN_MAX) this.declined.add(toolUseId);
    this.options.respond(requestId, { behavior: 'deny', message });
  }

  /** Answers a Bash approval once; false when it is not pending. */
  answerApproval(nativeId: string | number, response: ApprovalResponse): boolean {
    const question = typeof nativeId === 'string' ? this.pending.get(nativeId) : undefined;
    if (!question || question.kind !== 'approval') return false;
    this.pending.delete(nativeId as string);
    if (response !== 'accept') {
      this.deny(nativeId as string, question.toolUseId, DECLINED, 'answered');
      return true;
    }
    return this.options.respond(nativeId as string, { behavior: 'allow', updatedInput: question.input });
  }

  /** Answers AskUserQuestion once; no answers refuse it. False when it is not pending. */
  answerQuestion(nativeId: string | number, answers: Record<string, string[]>): boolean {
    const question = typeof nativeId === 'string' ? this.pending.get(nativeId) : undefined;
    if (!question || question.kind !== 'input') return false;
    this.pending.delete(nativeId as string);
    const native: Record<string, string> = {};
    for (const [id, text] of question.texts ?? []) {
      const answer = answers[id]?.[0];
      if (answer !== undefined) native[text] = answer;
    }
    if (Object.keys(native).length === 0) {
      this.deny(nativeId as string, question.toolUseId, NOT_ANSWERED, 'answered');
      return true;
    }
    return this.options.respond(nativeId as string, {
      behavior: 'allow',
      updatedInput: { ...question.input, answers: native },
    });
  }
}
