// The state and plumbing every driver's session shares (Codex, Claude Code, ACP): the open/closed
// flags, the current model and agent version, guarded event delivery, and — for a session that owns
// its agent process — the process's id, diagnostics and the close sequence.
import type { Logger } from '@nestjs/common';
import { type AgentEvent, DriverError, type OpenSessionOptions, type SkillInfo } from './agent-driver.js';
import type { CodexProcess } from './codex/codex-process.js';

export abstract class DriverSession {
  protected closing = false;
  protected ended = false;
  /** Events that arrive before the session is set up are for nobody: drop them. */
  protected ready = false;
  protected currentModel: string | undefined;
  protected version: string | undefined;
  protected abstract readonly options: OpenSessionOptions;
  protected abstract readonly log: Logger;

  get model(): string | undefined {
    return this.currentModel;
  }
  get agentVersion(): string | undefined {
    return this.version;
  }
  /** The thread's title, for agents that name their threads (Codex); the others have none. */
  get title(): string | undefined {
    return undefined;
  }

  /** The agent's skills, for agents that have them (Codex); the others offer none. */
  listSkills(): Promise<SkillInfo[]> {
    return Promise.resolve([]);
  }

  /** The session as the logs name it ("thread …", "Claude session …"). */
  protected abstract describe(): string;

  protected assertOpen(): void {
    if (this.closing || this.ended) throw new DriverError('session_closed', 'The agent session has ended');
  }

  /** Hands an event to the session manager; a consumer that throws is logged, never propagated. */
  protected emit(event: AgentEvent): void {
    try {
      this.options.onEvent(event);
    } catch (error) {
      this.log.error(`Event consumer of ${this.describe()} threw: ${(error as Error).name}`);
    }
  }
}

/** A session that owns one agent process and one transport over its stdio. */
export abstract class ProcessDriverSession extends DriverSession {
  protected process!: CodexProcess;

  /** The agent's process id (tests kill it to check supervision). */
  get pid(): number | undefined {
    return this.process.pid;
  }
  /** The tail of the agent's stderr, for local debugging only. */
  get diagnostics(): string {
    return this.process.diagnostics;
  }

  /** Stops the process (stdin first, then the group) and closes the transport; idempotent. */
  async close(): Promise<void> {
    if (this.closing) {
      await this.process.exited;
      return;
    }
    this.closing = true;
    const exit = this.process.stop();
    this.closeTransport();
    await exit;
  }

  /** Closes the transport as the client (`closed_by_client`) and drops what it still awaits. */
  protected abstract closeTransport(): void;
}
