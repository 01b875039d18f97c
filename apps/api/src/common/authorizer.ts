import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { AuthorizeReply, GrantsChangedNotice, Subjects } from '#contracts';
import { decodeJson, NATS_CONNECTION } from '#messaging';
import type { ApiConfig } from '../config.js';
import { ServiceClient } from './service-client.js';
import { API_CONFIG, SUBJECTS } from './tokens.js';

/** Bound on remembered decisions: a burst of distinct callers must not grow the heap forever. */
const MAX_ENTRIES = 10_000;

/** Connection events after which a grants-changed notice may have been lost. */
const LOSSY_STATUSES: ReadonlySet<string> = new Set([
  'disconnect',
  'reconnect',
  'staleConnection',
  'slowConsumer',
  'forceReconnect',
]);

interface Decision {
  reply: AuthorizeReply;
  expiresAt: number;
}

export interface AuthorizeQuery {
  actorId: string;
  edgeId: string;
  accessId?: string;
}

/**
 * `history.authorize` with a short memory of positive answers (docs/contract.md "Authorization").
 * Every edge call is authorized (docs/architecture.md invariant 6), and asking history each time was
 * an extra NATS round trip plus a Postgres query per poll (B1). A "yes" for (actor, connector,
 * access) is reused for at most `authorizeCacheMs`; refusals and failures are never kept. Anything
 * that can revoke drops the actor's decisions at once: history's grants-changed notice (access
 * updated or deleted, connector enrolled), this api's own access update/delete, and any
 * interruption of the NATS connection (a notice may have been missed while it was down).
 */
@Injectable()
export class Authorizer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(Authorizer.name);
  private readonly ttlMs: number;
  /** actor → (connector, access) key → decision. */
  private readonly decisions = new Map<string, Map<string, Decision>>();
  private size = 0;
  /**
   * Bumped by every invalidation: an answer that was in flight across one is not remembered, as
   * history may have given it before the change it was told about.
   */
  private generation = 0;
  private subscription?: Subscription;

  constructor(
    private readonly services: ServiceClient,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SUBJECTS) private readonly subjects: Subjects,
    @Inject(API_CONFIG) config: ApiConfig,
  ) {
    this.ttlMs = config.authorizeCacheMs ?? 0;
  }

  onModuleInit(): void {
    if (this.ttlMs <= 0) return;
    this.subscription = this.nc.subscribe(this.subjects.grantsChanged, {
      callback: (error, msg) => {
        if (error) return this.forgetAll();
        try {
          const notice = decodeJson<Partial<GrantsChangedNotice>>(msg.data, msg.subject);
          if (typeof notice.actor_id === 'string') this.forget(notice.actor_id);
          else this.forgetAll();
        } catch {
          // Unreadable: somebody's grants changed, so nobody's decision is kept.
          this.forgetAll();
        }
      },
    });
    // The status iterator ends by itself when the connection closes.
    void this.watchConnection();
  }

  onApplicationShutdown(): void {
    this.subscription?.unsubscribe();
    this.forgetAll();
  }

  /**
   * History's answer for this query, or a remembered "yes" younger than the TTL. `fresh` always
   * asks history (the check after a watch's wait, which exists to see a revocation) and
   * remembers the answer when positive.
   */
  async authorize(query: AuthorizeQuery, options: { fresh?: boolean } = {}): Promise<AuthorizeReply> {
    const key = `${query.edgeId}\u0000${query.accessId ?? ''}`;
    if (this.ttlMs > 0 && !options.fresh) {
      const known = this.decisions.get(query.actorId)?.get(key);
      if (known && known.expiresAt > performance.now()) return known.reply;
    }
    const generation = this.generation;
    const reply = await this.services.history('historyAuthorize', {
      actor_id: query.actorId,
      edge_id: query.edgeId,
      ...(query.accessId ? { access_id: query.accessId } : {}),
    });
    // Only an answer with no invalidation in flight may be reused.
    if (this.ttlMs > 0 && generation === this.generation) this.remember(query.actorId, key, reply);
    return reply;
  }

  /** Drops every decision of one actor (their grants changed). */
  forget(actorId: string): void {
    this.generation += 1;
    const entries = this.decisions.get(actorId);
    if (!entries) return;
    this.size -= entries.size;
    this.decisions.delete(actorId);
  }

  forgetAll(): void {
    this.generation += 1;
    this.decisions.clear();
    this.size = 0;
  }

  private remember(actorId: string, key: string, reply: AuthorizeReply): void {
    if (this.size >= MAX_ENTRIES) this.forgetAll();
    let entries = this.decisions.get(actorId);
    if (!entries) this.decisions.set(actorId, (entries = new Map()));
    if (!entries.has(key)) this.size += 1;
    entries.set(key, { reply, expiresAt: performance.now() + this.ttlMs });
  }

  /** A disconnect or a slow subscription may have swallowed notices: forget everything then. */
  private async watchConnection(): Promise<void> {
    try {
      for await (const status of this.nc.status()) {
        if (LOSSY_STATUSES.has(status.type)) this.forgetAll();
      }
    } catch (error) {
      this.logger.warn(`Connection status watch ended: ${(error as Error).message}`);
      this.forgetAll();
    }
  }
}
