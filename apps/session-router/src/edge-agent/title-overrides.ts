// Title overrides as every live reply reads them. A renamed session's title is laid over each
// poll, watch and send reply, and reading it from Redis was the one Redis command of every poll
// (about an eighth of the router's CPU per poll in B1). Overrides change only through a router
// (rename, delete), so each replica keeps the answers it read and drops one the moment any
// replica announces a change on `<ns>.session.<sid>.title`. The TTL only bounds a lost notice.
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { NatsBus } from '#messaging';
import { TitleOverrideRepository } from './title-override.repository.js';

/** How long an answer is reused when no notice came (a notice drops it at once). */
export const TITLE_CACHE_TTL_MS = 10_000;
/** Sessions remembered at most; beyond it the memory starts over. */
const TITLE_CACHE_MAX = 50_000;

interface Cached {
  title: string | null;
  at: number;
}

@Injectable()
export class TitleOverrides implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger(TitleOverrides.name);
  private readonly cache = new Map<string, Cached>();
  /**
   * Counts the changes this replica heard of. A read that overlapped one does not keep what it
   * read: it may be the value from before the change.
   */
  private changes = 0;
  private subscription?: Subscription;

  constructor(
    private readonly repository: TitleOverrideRepository,
    private readonly bus: NatsBus,
  ) {}

  onApplicationBootstrap(): void {
    // Not in a queue group: every replica must drop its own copy.
    this.subscription = this.bus.nc.subscribe(this.bus.subjects.titleChangedWildcard, {
      callback: (error, msg) => {
        if (error) {
          this.log.error(`Title notice subscription failed: ${error.message}`);
          return;
        }
        const sessionId = this.bus.subjects.sessionIdOf(msg.subject);
        if (sessionId) this.forget(sessionId);
      },
    });
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  /** The session's override, or null when it has none. Throws when Redis cannot say. */
  async get(sessionId: string): Promise<string | null> {
    const cached = this.cache.get(sessionId);
    if (cached && Date.now() - cached.at < TITLE_CACHE_TTL_MS) return cached.title;
    const changes = this.changes;
    const title = await this.repository.get(sessionId);
    if (this.changes === changes) {
      if (this.cache.size >= TITLE_CACHE_MAX) this.cache.clear();
      this.cache.set(sessionId, { title, at: Date.now() });
    }
    return title;
  }

  async set(sessionId: string, title: string): Promise<void> {
    try {
      await this.repository.set(sessionId, title);
    } finally {
      // Also after a failed write: Redis may have taken it before the error.
      this.announce(sessionId);
    }
  }

  async clear(sessionId: string): Promise<void> {
    try {
      await this.repository.clear(sessionId);
    } finally {
      this.announce(sessionId);
    }
  }

  private forget(sessionId: string): void {
    this.changes += 1;
    this.cache.delete(sessionId);
  }

  /** Drops this replica's copy at once, and every other replica's when the notice reaches it. */
  private announce(sessionId: string): void {
    this.forget(sessionId);
    try {
      this.bus.nc.publish(this.bus.subjects.sessionTitleChanged(sessionId));
    } catch (error) {
      // A closed connection: the other replicas' copies lapse within TITLE_CACHE_TTL_MS.
      this.log.warn(`Title change of session ${sessionId} not announced: ${(error as Error).message}`);
    }
  }
}
