import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import type { AuthorizeReply, GrantsChangedNotice } from '#contracts';
import { decodeJson, NatsBus } from '#messaging';
import { recordOutageGrant } from '#telemetry';
import type { ApiConfig } from '../config.js';
import { NextCall } from './next-call.js';
import { isUnreachable, ServiceClient } from './service-client.js';
import { API_CONFIG } from './tokens.js';

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
  /** Reused without asking history until then. */
  freshUntil: number;
  /** Stands in for history's answer, while history cannot give one, until then. */
  usableUntil: number;
}

/** Stand-ins are logged at most this often: an outage must not flood the log. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;

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
 *
 * While history cannot answer at all, a remembered "yes" stands in for up to `authorizeOutageMs`
 * after history last gave it (docs/reliability.md "While history is down"): every revocation
 * goes through history, so a grant nobody told this api about is still a grant; a refusal from
 * history drops the decision too.
 */
@Injectable()
export class Authorizer implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger(Authorizer.name);
  private readonly ttlMs: number;
  private readonly outageMs: number;
  private lastOutageLog = -Infinity;
  /** actor → (connector, access) key → decision. */
  private readonly decisions = new Map<string, Map<string, Decision>>();
  private size = 0;
  /**
   * Bumped by every invalidation: an answer that was in flight across one is not remembered, as
   * history may have given it before the change it was told about.
   */
  private generation = 0;
  private subscription?: Subscription;
  /** History requests in flight and queued, per actor and key (next-call.ts). */
  private readonly asking = new NextCall<AuthorizeReply>();

  constructor(
    private readonly services: ServiceClient,
    private readonly bus: NatsBus,
    @Inject(API_CONFIG) config: ApiConfig,
  ) {
    this.ttlMs = config.authorizeCacheMs ?? 0;
    this.outageMs = Math.max(config.authorizeOutageMs ?? 0, this.ttlMs);
  }

  onModuleInit(): void {
    if (this.outageMs <= 0) return;
    this.subscription = this.bus.nc.subscribe(this.bus.subjects.grantsChanged, {
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
   * remembers the answer when positive. When history cannot answer, a remembered "yes" within the
   * outage bound is the answer (fresh or not) unless `standIn` is false; otherwise the failure is
   * thrown.
   */
  async authorize(
    query: AuthorizeQuery,
    options: { fresh?: boolean; standIn?: boolean } = {},
  ): Promise<AuthorizeReply> {
    const key = `${query.edgeId}\u0000${query.accessId ?? ''}`;
    const known = this.outageMs > 0 ? this.decisions.get(query.actorId)?.get(key) : undefined;
    if (known && !options.fresh && known.freshUntil > performance.now()) return known.reply;
    const generation = this.generation;
    let reply: AuthorizeReply;
    try {
      // Callers of one (actor, connector, access) share history's answer to a request sent after
      // they asked (next-call.ts): never one older than a revocation they could know of.
      reply = await this.asking.run(`${query.actorId}\u0000${key}`, () =>
        this.services.history('historyAuthorize', {
          actor_id: query.actorId,
          edge_id: query.edgeId,
          ...(query.accessId ? { access_id: query.accessId } : {}),
        }),
      );
    } catch (error) {
      if (!isUnreachable(error)) {
        // History said no: whatever was remembered for this key is no longer a grant.
        this.forgetKey(query.actorId, key);
        throw error;
      }
      const standIn = options.standIn === false ? undefined : this.standIn(query.actorId, key);
      if (!standIn) throw error;
      this.noteOutage((error as Error).message);
      return standIn;
    }
    // Only an answer with no invalidation in flight may be reused.
    if (this.outageMs > 0 && generation === this.generation) this.remember(query.actorId, key, reply);
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
    const now = performance.now();
    entries.set(key, { reply, freshUntil: now + this.ttlMs, usableUntil: now + this.outageMs });
  }

  private forgetKey(actorId: string, key: string): void {
    const entries = this.decisions.get(actorId);
    if (!entries?.delete(key)) return;
    this.generation += 1;
    this.size -= 1;
    if (entries.size === 0) this.decisions.delete(actorId);
  }

  /** The remembered "yes" that may stand in for history now, if any. */
  private standIn(actorId: string, key: string): AuthorizeReply | undefined {
    const known = this.decisions.get(actorId)?.get(key);
    return known && known.usableUntil > performance.now() ? known.reply : undefined;
  }

  private noteOutage(reason: string): void {
    recordOutageGrant();
    const now = performance.now();
    if (now - this.lastOutageLog < OUTAGE_LOG_INTERVAL_MS) return;
    this.lastOutageLog = now;
    this.log.warn(`History cannot authorize (${reason}); remembered grants stand in.`);
  }

  /** A disconnect or a slow subscription may have swallowed notices: forget everything then. */
  private async watchConnection(): Promise<void> {
    try {
      for await (const status of this.bus.nc.status()) {
        if (LOSSY_STATUSES.has(status.type)) this.forgetAll();
      }
    } catch (error) {
      this.log.warn(`Connection status watch ended: ${(error as Error).message}`);
      this.forgetAll();
    }
  }
}
