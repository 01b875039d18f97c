// Which token generation each edge holds now. An edge's token names its generation; history
// owns the current one (it goes up at every rotation, and the connector is gone after a
// delete). Heartbeats and updates arrive every few seconds per edge, so answers are cached for a
// short while and dropped at once when history announces a rotation or deletion.
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { tokenGeneration, verifyEdgeToken, type EdgeCredentialsChangedNotice } from '#contracts';
import { decodeJson, RpcRemoteError, RpcUnavailableError, NatsBus } from '#messaging';
import type { RouterConfig } from '../config.js';
import { EdgeCredentialsUnknownError } from './errors.js';
import { HistoryClient } from './history.client.js';
import { ROUTER_CONFIG } from './tokens.js';

/**
 * How long an answer is reused. History's notice drops it at once; the TTL only bounds a lost
 * notice, so a revoked token works at most this long on a replica that missed it.
 */
const GENERATION_TTL_MS = 10_000;
/**
 * While history cannot say, a cached answer is used and history asked again after this long, not
 * at every update (a busy edge sends dozens a second, and history's database is down).
 */
const OUTAGE_RETRY_MS = 1_000;
/** Entries kept at most (one per active edge); the oldest go first beyond it. */
const CACHE_MAX_ENTRIES = 50_000;

interface Cached {
  /** Null: no such connector. */
  generation: number | null;
  at: number;
}

/**
 * History did not answer, or answered that it cannot (its database is down): either way the
 * generation is not known now, which is not the same as a connector that is gone.
 */
function historyCannotSay(error: unknown): boolean {
  return (
    error instanceof RpcUnavailableError || (error instanceof RpcRemoteError && error.code === 'unavailable')
  );
}

@Injectable()
export class EdgeCredentials implements OnModuleInit, OnModuleDestroy {
  private readonly log = new Logger(EdgeCredentials.name);
  private readonly cache = new Map<string, Cached>();
  /** Edges checked against a cached generation since history last answered for them (one warning each). */
  private readonly onCache = new Set<string>();
  private subscription?: Subscription;

  constructor(
    private readonly bus: NatsBus,
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    private readonly history: HistoryClient,
  ) {}

  onModuleInit(): void {
    this.subscription = this.bus.nc.subscribe(this.bus.subjects.edgeCredentialsChanged, {
      callback: (error, msg) => {
        if (error) return;
        try {
          const notice = decodeJson<EdgeCredentialsChangedNotice>(msg.data, msg.subject);
          if (typeof notice?.edge_id === 'string') this.cache.delete(notice.edge_id);
        } catch {
          // A malformed notice changes nothing; the TTL still bounds every entry.
        }
      },
    });
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  /**
   * True when `token` is the edge's token of its current generation. Throws
   * EdgeCredentialsUnknownError when history cannot say and nothing is cached (the edge retries;
   * nothing is accepted blind).
   */
  async verify(edgeId: string, token: string): Promise<boolean> {
    const claimed = tokenGeneration(token);
    if (claimed === null) return false;
    const generation = await this.current(edgeId);
    return generation !== null && verifyEdgeToken(this.config.edgeSecret, edgeId, token, generation);
  }

  private async current(edgeId: string): Promise<number | null> {
    const cached = this.cache.get(edgeId);
    if (cached && Date.now() - cached.at < GENERATION_TTL_MS) return cached.generation;
    try {
      const { generation } = await this.history.call('historyEdgeCredential', { edge_id: edgeId });
      this.onCache.delete(edgeId);
      this.remember(edgeId, generation);
      return generation;
    } catch (error) {
      if (error instanceof RpcRemoteError && error.code === 'connector_not_found') {
        this.remember(edgeId, null);
        return null;
      }
      if (!historyCannotSay(error)) throw error;
      if (!cached) throw new EdgeCredentialsUnknownError();
      return this.duringOutage(edgeId, cached);
    }
  }

  /** The cached answer while history cannot say, asked again only every OUTAGE_RETRY_MS. */
  private duringOutage(edgeId: string, cached: Cached): number | null {
    // A notice that dropped the entry meanwhile wins: nothing is put back for it.
    if (this.cache.get(edgeId) === cached) {
      this.cache.set(edgeId, {
        generation: cached.generation,
        at: Date.now() - GENERATION_TTL_MS + OUTAGE_RETRY_MS,
      });
    }
    // Every update of a busy edge comes here during an outage: one line per edge and outage.
    if (!this.onCache.has(edgeId) && this.onCache.size < CACHE_MAX_ENTRIES) {
      this.onCache.add(edgeId);
      this.log.warn(`History unavailable; edge ${edgeId} checked against its last known generation.`);
    }
    return cached.generation;
  }

  private remember(edgeId: string, generation: number | null): void {
    this.cache.delete(edgeId);
    this.cache.set(edgeId, { generation, at: Date.now() });
    if (this.cache.size > CACHE_MAX_ENTRIES) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }
}
