// A deterministic agent for tests and demos: it plays the steps of the first script rule that
// matches each prompt, emitting the same neutral events a real driver would.
import { randomUUID } from 'node:crypto';
import type { AgentModel, Installation, InputQuestion } from '#contracts';
import {
  DriverError,
  type AgentDriver,
  type AgentEvent,
  type AgentSession,
  type ApprovalResponse,
  type DiscoveryResult,
  ALL_CAPABILITIES,
  type DriverCapabilities,
  type OpenSessionOptions,
  type SkillInfo,
  type TurnInput,
} from '../agent-driver.js';
import { hashId } from '../../common/random.js';
import { matchRule, type Script, type ScriptStep } from './script.js';
import { settled } from '../../common/settled.js';

export const SCRIPTED_KIND = 'scripted';
const SCRIPTED_PATH = 'builtin:scripted';
/** Where scripted skills claim to live; paths never leave the edge. */
const SKILLS_ROOT = '/builtin/scripted/skills';

export const SCRIPTED_INSTALLATION: Installation = {
  id: hashId(SCRIPTED_KIND, SCRIPTED_PATH, SCRIPTED_PATH),
  kind: SCRIPTED_KIND,
  path: SCRIPTED_PATH,
  source: 'builtin',
};

const CAPABILITIES: DriverCapabilities = { ...ALL_CAPABILITIES };

/**
 * The shape of the thread ids this driver issues. It keeps no state between runs, so on resume it
 * takes any id of that shape: the edge only resumes ids its own binding file recorded.
 */
const SCRIPTED_THREAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Splits text into `parts` pieces of nearly equal length, never inside a character. */
function split(text: string, parts: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / parts));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}

interface Turn {
  id: string;
  abort: AbortController;
}

class ScriptedSession implements AgentSession {
  readonly threadId: string;
  readonly model: string | undefined;
  readonly title: string | undefined;
  readonly agentVersion: string;
  readonly capabilities = CAPABILITIES;
  private dead = false;
  private turn: Turn | null = null;
  private turns = 0;
  private items = 0;
  private requests = 0;
  private readonly waiting = new Map<
    string | number,
    (value: ApprovalResponse | Record<string, string[]>) => void
  >();

  constructor(
    private readonly script: Script,
    private readonly emit: (event: AgentEvent) => void,
    threadId?: string,
  ) {
    this.threadId = threadId ?? randomUUID();
    this.model = script.models[0]?.id;
    this.title = script.title;
    this.agentVersion = script.agent_version;
  }

  async startTurn(input: TurnInput): Promise<{ turnId: string }> {
    if (this.dead) throw new DriverError('session_closed', 'The scripted agent has exited.');
    if (this.turn) throw new DriverError('invalid_request', 'A scripted turn is already running.');
    const turn: Turn = { id: `turn-${++this.turns}`, abort: new AbortController() };
    this.turn = turn;
    if (
      this.script.dispatch_delay_ms > 0 &&
      !(await sleep(this.script.dispatch_delay_ms, turn.abort.signal))
    ) {
      throw new DriverError('session_closed', 'The scripted agent closed during dispatch.');
    }
    const steps = matchRule(this.script, input.text)?.steps ?? [];
    // Play after the caller saw the turn id, like a native agent answering turn/start first.
    setImmediate(() => void this.play(turn, steps, input.text, input.images?.length ?? 0));
    return { turnId: turn.id };
  }

  private async play(turn: Turn, steps: ScriptStep[], prompt: string, images: number): Promise<void> {
    const signal = turn.abort.signal;
    let answer = '';
    let outcome: 'completed' | 'failed' | 'interrupted' = 'completed';
    for (const step of steps) {
      if (signal.aborted) break;
      if (step.type === 'reply') {
        const text = step.text
          .replaceAll('{prompt_length}', String(prompt.length))
          .replaceAll('{image_count}', String(images))
          .replaceAll('{answer}', answer);
        const itemId = `item-${++this.items}`;
        for (const [index, piece] of split(text, step.deltas).entries()) {
          if (index > 0 && !(await sleep(step.delay_ms, signal))) break;
          this.emit({ type: 'message_delta', turnId: turn.id, itemId, text: piece });
        }
      } else if (step.type === 'command') {
        await this.runCommand(turn, step);
      } else if (step.type === 'file_change') {
        await this.runFileChange(turn, step);
      } else if (step.type === 'input') {
        answer = await this.askInput(turn, step.questions);
      } else if (step.type === 'delay') {
        await sleep(step.ms, signal);
      } else if (step.type === 'title') {
        this.emit({ type: 'title', title: step.title });
      } else if (step.type === 'fail') {
        outcome = 'failed';
        break;
      } else if (step.type === 'crash') {
        this.dead = true;
        this.turn = null;
        this.emit({ type: 'closed', reason: 'The scripted agent crashed on purpose.' });
        return;
      }
    }
    if (this.turn !== turn) return;
    this.turn = null;
    if (signal.aborted) {
      if (this.dead) return;
      outcome = 'interrupted';
    }
    this.emit({ type: 'turn_completed', turnId: turn.id, status: outcome });
  }

  /** Waits for the answer to a request; an interrupt or close counts as a decline. */
  private waitFor<T extends ApprovalResponse | Record<string, string[]>>(
    nativeId: number,
    signal: AbortSignal,
    onAbort: T,
  ): Promise<T> {
    return new Promise((resolve) => {
      const abort = (): void => {
        this.waiting.delete(nativeId);
        resolve(onAbort);
      };
      if (signal.aborted) return abort();
      signal.addEventListener('abort', abort, { once: true });
      this.waiting.set(nativeId, (value) => {
        signal.removeEventListener('abort', abort);
        this.waiting.delete(nativeId);
        resolve(value as T);
      });
    });
  }

  private async approval(
    turn: Turn,
    request: Omit<Extract<AgentEvent, { type: 'approval_request' }>, 'type' | 'turnId' | 'nativeId'>,
  ): Promise<ApprovalResponse> {
    const nativeId = ++this.requests;
    const answer = this.waitFor<ApprovalResponse>(nativeId, turn.abort.signal, 'decline');
    this.emit({ type: 'approval_request', turnId: turn.id, nativeId, ...request });
    const response = await answer;
    this.emit({ type: 'request_resolved', nativeId });
    return response;
  }

  private async runCommand(turn: Turn, step: Extract<ScriptStep, { type: 'command' }>): Promise<void> {
    const nativeId = `cmd-${++this.items}`;
    const base = { nativeId, kind: 'commandExecution', command: step.command, cwd: '.' };
    this.emit({ type: 'activity', turnId: turn.id, activity: { ...base, status: 'running' } });
    if (step.approval) {
      const response = await this.approval(turn, {
        kind: 'command',
        itemId: nativeId,
        command: step.command,
        reason: step.reason,
      });
      if (response === 'decline') {
        this.emit({ type: 'activity', turnId: turn.id, activity: { ...base, status: 'declined' } });
        return;
      }
    }
    if (step.output_deltas > 0) {
      for (const piece of split(step.output, step.output_deltas)) {
        this.emit({ type: 'output_delta', turnId: turn.id, nativeId, text: piece });
      }
    }
    this.emit({
      type: 'activity',
      turnId: turn.id,
      activity: {
        ...base,
        status: step.exit_code === 0 ? 'completed' : 'failed',
        output: step.output,
        exitCode: step.exit_code,
        durationMs: 1,
      },
    });
  }

  private async runFileChange(turn: Turn, step: Extract<ScriptStep, { type: 'file_change' }>): Promise<void> {
    const nativeId = `fc-${++this.items}`;
    const base = {
      nativeId,
      kind: 'fileChange',
      changes: [{ path: step.path, kind: step.kind, diff: step.diff }],
    };
    this.emit({ type: 'activity', turnId: turn.id, activity: { ...base, status: 'running' } });
    if (step.approval) {
      const response = await this.approval(turn, {
        kind: 'file_change',
        itemId: nativeId,
        reason: step.reason,
      });
      if (response === 'decline') {
        this.emit({ type: 'activity', turnId: turn.id, activity: { ...base, status: 'declined' } });
        return;
      }
    }
    this.emit({
      type: 'activity',
      turnId: turn.id,
      activity: { ...base, status: 'completed', durationMs: 1 },
    });
    this.emit({ type: 'turn_diff', turnId: turn.id, diff: step.diff });
  }

  private async askInput(turn: Turn, questions: InputQuestion[]): Promise<string> {
    const nativeId = ++this.requests;
    const itemId = `input-${++this.items}`;
    const answers = this.waitFor<Record<string, string[]>>(nativeId, turn.abort.signal, {});
    this.emit({ type: 'input_request', turnId: turn.id, nativeId, itemId, questions });
    const given = await answers;
    this.emit({ type: 'request_resolved', nativeId });
    return questions
      .map((question) => (question.is_secret ? '[hidden]' : (given[question.id]?.[0] ?? '')))
      .join(', ');
  }

  interrupt(turnId: string): Promise<void> {
    if (this.turn?.id === turnId) this.turn.abort.abort();
    return Promise.resolve();
  }

  respondApproval(nativeId: string | number, response: ApprovalResponse): Promise<void> {
    return settled(() => {
      if (this.dead) throw new DriverError('session_closed', 'The scripted agent has exited.');
      this.waiting.get(nativeId)?.(response);
    });
  }

  respondInput(nativeId: string | number, answers: Record<string, string[]>): Promise<void> {
    return settled(() => {
      if (this.dead) throw new DriverError('session_closed', 'The scripted agent has exited.');
      this.waiting.get(nativeId)?.(answers);
    });
  }

  listModels(): Promise<AgentModel[]> {
    return Promise.resolve(this.script.models.map((model) => ({ ...model })));
  }

  listSkills(): Promise<SkillInfo[]> {
    return Promise.resolve(
      this.script.skills.map((skill) => ({
        name: skill.name,
        description: skill.description,
        path: `${SKILLS_ROOT}/${skill.name}`,
      })),
    );
  }

  close(): Promise<void> {
    this.dead = true;
    this.turn?.abort.abort();
    return Promise.resolve();
  }
}

export class ScriptedDriver implements AgentDriver {
  readonly kind = SCRIPTED_KIND;

  constructor(private readonly script: Script) {}

  discover(): Promise<DiscoveryResult> {
    return Promise.resolve({ installations: [{ ...SCRIPTED_INSTALLATION }], truncated: false });
  }

  open(options: OpenSessionOptions): Promise<AgentSession> {
    return settled(() => {
      if (options.installation.id !== SCRIPTED_INSTALLATION.id) {
        throw new DriverError('launch_failed', 'Not a scripted installation.');
      }
      if (options.threadId !== undefined && !SCRIPTED_THREAD_ID.test(options.threadId)) {
        throw new DriverError('resume_unavailable', 'Not a scripted thread.');
      }
      return new ScriptedSession(this.script, options.onEvent, options.threadId);
    });
  }
}
