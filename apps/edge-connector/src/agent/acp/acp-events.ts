// Maps ACP `session/update` notifications and `session/request_permission` requests onto the
// driver's neutral events, so a session driven over ACP reads like one driven by Codex: message
// chunks become streamed assistant text, thought chunks a `reasoning` activity (its text is never
// shown, as with Codex), tool calls tool activities.
import type { AgentEvent, NativeActivity } from '../agent-driver.js';
import { NATIVE_ID_MAX_CHARS } from '../prompt-limits.js';
import { DIFF_MAX_CHARS, TOOL_TITLE_MAX_CHARS } from './acp-limits.js';

export type JsonObject = Record<string, unknown>;
export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Update kinds the edge has nothing to show for; they are dropped without a log line. */
const QUIET_KINDS: ReadonlySet<string> = new Set([
  'user_message_chunk', // History replayed by session/load: the edge restores its own display.
  'available_commands_update',
  'current_mode_update',
  'config_option_update',
  'plan',
  'usage_update',
]);

export type ActivityKind = 'commandExecution' | 'fileChange' | 'dynamicToolCall';

function activityKind(toolKind: unknown): ActivityKind {
  if (toolKind === 'execute') return 'commandExecution';
  if (toolKind === 'edit' || toolKind === 'delete' || toolKind === 'move') return 'fileChange';
  return 'dynamicToolCall';
}

function activityStatus(status: unknown): NativeActivity['status'] | undefined {
  if (status === 'pending' || status === 'in_progress') return 'running';
  if (status === 'completed') return 'completed';
  if (status === 'failed') return 'failed';
  return undefined;
}

/** The text parts of a tool call's content, joined; diffs and terminals are not output. */
function contentText(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  const parts: string[] = [];
  for (const item of content) {
    if (!isObject(item) || item.type !== 'content' || !isObject(item.content)) continue;
    const text = str(item.content.text);
    if (text !== undefined) parts.push(text);
  }
  return parts.length > 0 ? parts.join('\n') : undefined;
}

function diffText(oldText: string | undefined, newText: string): string {
  const lines = (text: string, mark: string) =>
    text === ''
      ? []
      : text
          .replace(/\n$/, '')
          .split('\n')
          .map((line) => `${mark}${line}`);
  return [...lines(oldText ?? '', '-'), ...lines(newText, '+')].join('\n').slice(0, DIFF_MAX_CHARS);
}

/** File changes carried as `diff` content, with a diff in the edge's `+`/`-` line form. */
function fileChanges(content: unknown): NativeActivity['changes'] {
  if (!Array.isArray(content)) return undefined;
  const changes: NonNullable<NativeActivity['changes']> = [];
  for (const item of content) {
    if (!isObject(item) || item.type !== 'diff') continue;
    const filePath = str(item.path);
    const newText = str(item.newText);
    if (!filePath || newText === undefined) continue;
    const oldText = str(item.oldText);
    changes.push({ path: filePath, kind: oldText ? 'update' : 'add', diff: diffText(oldText, newText) });
  }
  return changes.length > 0 ? changes : undefined;
}

/** The command a tool call runs: the raw input's `command` when given, else its title. */
export function toolCommand(tool: JsonObject): string | undefined {
  const raw = isObject(tool.rawInput) ? str(tool.rawInput.command) : undefined;
  const command = raw ?? str(tool.title);
  return command && command.length <= TOOL_TITLE_MAX_CHARS ? command : undefined;
}

/** A native tool call id the edge accepts, or undefined. */
export function toolCallId(tool: JsonObject): string | undefined {
  const id = str(tool.toolCallId);
  return id && id.length <= NATIVE_ID_MAX_CHARS ? id : undefined;
}

export interface ToolState {
  kind: ActivityKind;
  command?: string;
}

/** One session's translation state: which turn runs, and which text or thought is open. */
export class AcpEventMapper {
  /** Tool calls seen in this session (a later update may omit the kind). */
  readonly tools = new Map<string, ToolState>();
  private segment = 0;
  private open: 'message' | 'thought' | undefined;
  private turnId: string | undefined;

  constructor(
    private readonly cwd: string,
    private readonly emit: (event: AgentEvent) => void,
    private readonly unknownKind: (kind: string) => void,
  ) {}

  beginTurn(turnId: string): void {
    this.turnId = turnId;
    this.segment = 0;
    this.open = undefined;
  }

  /** Ends the open thought; the turn itself ends with the prompt's stop reason. */
  endTurn(): string | undefined {
    this.closeThought();
    const turnId = this.turnId;
    this.turnId = undefined;
    return turnId;
  }

  get currentTurn(): string | undefined {
    return this.turnId;
  }

  update(update: JsonObject): void {
    const kind = str(update.sessionUpdate);
    if (kind === undefined) return;
    if (kind === 'session_info_update') {
      const title = str(update.title);
      if (title) this.emit({ type: 'title', title });
      return;
    }
    const turnId = this.turnId;
    if (turnId === undefined) return; // Outside a turn (a load replay): nothing to stream.
    switch (kind) {
      case 'agent_message_chunk':
        this.onMessage(turnId, update.content);
        return;
      case 'agent_thought_chunk':
        this.onThought(turnId);
        return;
      case 'tool_call':
      case 'tool_call_update':
        this.closeThought();
        this.onTool(turnId, update, kind === 'tool_call');
        return;
      default:
        if (!QUIET_KINDS.has(kind)) this.unknownKind(kind);
    }
  }

  /** The activity a permission request stands for, made from the request when the agent sent none. */
  permissionActivity(tool: JsonObject): { id: string; state: ToolState } | undefined {
    const id = toolCallId(tool);
    if (!id || this.turnId === undefined) return undefined;
    this.closeThought();
    const known = this.tools.get(id);
    if (known && tool.kind === undefined && tool.content === undefined) return { id, state: known };
    this.onTool(this.turnId, { ...tool, status: 'pending' }, known === undefined);
    const state = this.tools.get(id);
    return state ? { id, state } : undefined;
  }

  /** A declined or cancelled call gets no update from the agent (Gemini CLI): end it here. */
  endTool(id: string, status: 'declined' | 'ended'): void {
    const state = this.tools.get(id);
    if (!state || this.turnId === undefined) return;
    this.emit({
      type: 'activity',
      turnId: this.turnId,
      activity: { nativeId: id, kind: state.kind, status },
    });
  }

  private onMessage(turnId: string, content: unknown): void {
    const text = isObject(content) && content.type === 'text' ? str(content.text) : undefined;
    if (!text) return;
    if (this.open !== 'message') {
      this.closeThought();
      this.open = 'message';
      this.segment += 1;
    }
    this.emit({ type: 'message_delta', turnId, itemId: `${turnId}:m${this.segment}`, text });
  }

  private onThought(turnId: string): void {
    if (this.open === 'thought') return;
    this.open = 'thought';
    this.segment += 1;
    this.emit({
      type: 'activity',
      turnId,
      activity: { nativeId: `${turnId}:r${this.segment}`, kind: 'reasoning', status: 'running' },
    });
  }

  private closeThought(): void {
    if (this.open !== 'thought' || this.turnId === undefined) {
      if (this.open === 'message') this.open = undefined;
      return;
    }
    this.open = undefined;
    this.emit({
      type: 'activity',
      turnId: this.turnId,
      activity: { nativeId: `${this.turnId}:r${this.segment}`, kind: 'reasoning', status: 'completed' },
    });
  }

  private onTool(turnId: string, tool: JsonObject, created: boolean): void {
    const id = toolCallId(tool);
    if (!id) return;
    const known = this.tools.get(id);
    if (!known && !created) return; // An update for a call never announced: nothing to attach it to.
    const kind = known?.kind ?? activityKind(tool.kind);
    const command = kind === 'commandExecution' ? (toolCommand(tool) ?? known?.command) : undefined;
    this.tools.set(id, { kind, ...(command ? { command } : {}) });
    // An update without a status changes fields only; `running` never reopens a finished activity.
    const status = activityStatus(tool.status) ?? 'running';
    const output = contentText(tool.content);
    const changes = kind === 'fileChange' ? fileChanges(tool.content) : undefined;
    this.emit({
      type: 'activity',
      turnId,
      activity: {
        nativeId: id,
        kind,
        status,
        ...(command ? { command, cwd: this.cwd } : {}),
        ...(output !== undefined ? { output } : {}),
        ...(changes ? { changes } : {}),
      },
    });
  }
}
