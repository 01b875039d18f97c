// One edge driving several agents (TETHER_AGENT=codex,claude,acp), as the reference edge drives
// Codex and Claude Code side by side. Discovery is the union of every driver's installations, and
// a session opens with the driver that discovered its installation: installation ids hash the
// kind and the path, so no two drivers ever report the same id. Every later operation of a session
// goes to the AgentSession its own driver returned, so nothing else needs routing.
import { Logger } from '@nestjs/common';
import { Limits, type Installation } from '#contracts';
import {
  DriverError,
  type AgentDriver,
  type AgentSession,
  type DiscoveryResult,
  type OpenSessionOptions,
} from './agent-driver.js';

/** What a driver's last discovery came to; a change is logged once, not on every discover. */
type MemberState = 'found' | 'none' | 'failed';

interface Member {
  readonly driver: AgentDriver;
  installations: Installation[];
  state?: MemberState;
}

export class CompositeDriver implements AgentDriver {
  readonly kind = 'composite';
  readonly kinds: readonly string[];
  private readonly log = new Logger(CompositeDriver.name);
  private readonly members: Member[];

  constructor(drivers: readonly AgentDriver[]) {
    if (drivers.length === 0) throw new Error('A composite driver needs at least one driver.');
    const kinds = drivers.map((driver) => driver.kind);
    if (new Set(kinds).size !== kinds.length)
      throw new Error(`Two drivers of one kind: ${kinds.join(', ')}.`);
    this.kinds = kinds;
    this.members = drivers.map((driver) => ({ driver, installations: [] }));
  }

  /**
   * Every driver discovers at once; one that fails (or finds nothing) leaves its installations out
   * and the others unaffected. Only when every driver fails is discovery itself a failure, with the
   * first driver's error (so `unsupported_user` still passes through).
   */
  async discover(): Promise<DiscoveryResult> {
    const results = await Promise.allSettled(this.members.map((member) => member.driver.discover()));
    const seen = new Set<string>();
    const installations: Installation[] = [];
    let truncated = false;
    results.forEach((outcome, index) => {
      const member = this.members[index]!;
      if (outcome.status === 'rejected') {
        member.installations = [];
        this.note(member, 'failed', (outcome.reason as Error)?.message);
        return;
      }
      member.installations = outcome.value.installations;
      truncated ||= outcome.value.truncated;
      this.note(member, member.installations.length > 0 ? 'found' : 'none');
      for (const installation of member.installations) {
        if (seen.has(installation.id)) continue;
        // The heartbeat carries every installation; the union stays within its bound.
        if (installations.length >= Limits.HEARTBEAT_INSTALLATIONS_MAX) {
          truncated = true;
          break;
        }
        seen.add(installation.id);
        installations.push(installation);
      }
    });
    if (results.every((outcome) => outcome.status === 'rejected')) {
      throw (results[0] as PromiseRejectedResult).reason;
    }
    return { installations, truncated };
  }

  /** Opens with the driver that discovered the installation; discovers once more if none has. */
  async open(options: OpenSessionOptions): Promise<AgentSession> {
    let owner = this.ownerOf(options.installation);
    if (!owner) {
      await this.discover().catch(() => undefined);
      owner = this.ownerOf(options.installation);
    }
    if (!owner) throw new DriverError('launch_failed', 'No agent driver on this edge has that installation');
    return owner.open(options);
  }

  /** Closes every driver's own processes; one that fails does not keep the others open. */
  async close(): Promise<void> {
    await Promise.allSettled(this.members.map((member) => member.driver.close?.() ?? Promise.resolve()));
  }

  private ownerOf(installation: Installation): AgentDriver | undefined {
    return this.members.find((member) =>
      member.installations.some(
        (candidate) => candidate.id === installation.id && candidate.kind === installation.kind,
      ),
    )?.driver;
  }

  private note(member: Member, state: MemberState, reason?: string): void {
    if (member.state === state) return;
    const first = member.state === undefined;
    member.state = state;
    const kind = member.driver.kind;
    if (state === 'failed') this.log.warn(`The ${kind} driver's discovery failed: ${reason ?? 'no reason'}.`);
    else if (state === 'none') this.log.warn(`The ${kind} driver found no installation.`);
    else if (!first) this.log.log(`The ${kind} driver finds installations again.`);
  }
}
