import { Inject, Injectable, Logger } from '@nestjs/common';
import { EDGE_AGENT_RPC_VERSION, type EdgeAgentResult } from '#contracts';
import { PeriodicWorker, type PeriodicTaskOptions } from '#telemetry';
import type { RouterConfig } from '../config.js';
import { EdgeRpcClient } from '../common/edge-rpc.client.js';
import {
  LEASE_CLAIM_RETRY_MS,
  LEASE_EXPIRE_ATTEMPTS_MAX,
  LEASE_REAPER_BATCH,
  LEASE_RUNNING_RECHECK_MS,
} from '../common/limits.js';
import { ROUTER_CONFIG } from '../common/tokens.js';
import { leaseDueAt } from './lease-policy.js';
import { LeasesRepository, type Lease } from './leases.repository.js';

/** Edge answers meaning "could not reach a working edge": keep the lease and try again later. */
const RETRY_STATUSES = new Set<EdgeAgentResult['status']>(['unavailable', 'upgrade_required']);

/**
 * Expires idle sessions. Every replica runs it; a claim is atomic in Redis, so each due lease is
 * handled by exactly one replica, and a replica that dies mid-claim leaves it due again later.
 */
@Injectable()
export class LeaseReaper extends PeriodicWorker {
  private readonly log = new Logger(LeaseReaper.name);
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    private readonly leases: LeasesRepository,
    private readonly edge: EdgeRpcClient,
  ) {
    super();
  }

  protected schedule(): PeriodicTaskOptions {
    return { name: 'router.lease-reaper', intervalMs: this.config.leaseReaperIntervalMs };
  }

  /** Waits for the claims a round already took. */
  protected override async drain(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  protected async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.leases.migrateLegacy(LEASE_REAPER_BATCH);
      const now = Date.now();
      const due = await this.leases.dueSessionIds(now, LEASE_REAPER_BATCH);
      for (const sessionId of due) {
        if (this.stopped) break;
        const claimScore = now + LEASE_CLAIM_RETRY_MS;
        if (!(await this.leases.claim(sessionId, now, claimScore))) continue;
        const work = this.settle(sessionId, claimScore).catch((error: unknown) => {
          this.log.error(`Lease of session ${sessionId} could not be settled: ${(error as Error).message}`);
        });
        this.inFlight.add(work);
        void work.finally(() => this.inFlight.delete(work));
      }
    } catch (error) {
      this.log.warn(`Lease reaper pass failed: ${(error as Error).message}`);
    }
  }

  private async settle(sessionId: string, claimScore: number): Promise<void> {
    const lease = await this.leases.read(sessionId);
    if (!lease) {
      await this.leases.release(sessionId, claimScore);
      return;
    }
    const now = Date.now();
    // A touch between the range read and the claim moved the due time: honour it.
    const dueAt = leaseDueAt(lease);
    if (dueAt > now) {
      await this.leases.reschedule(sessionId, claimScore, dueAt);
      return;
    }
    // A running turn has no wall-clock deadline, approvals included (reference §4).
    if (await this.leases.isRunning(sessionId)) {
      await this.leases.reschedule(sessionId, claimScore, now + LEASE_RUNNING_RECHECK_MS);
      return;
    }
    await this.expire(lease, claimScore);
  }

  private async expire(lease: Lease, claimScore: number): Promise<void> {
    const reply = await this.edge.ask({
      version: EDGE_AGENT_RPC_VERSION,
      actor_id: lease.ownerId,
      request: {
        edge_id: lease.edgeId,
        action: 'expire',
        session_id: lease.sessionId,
        ...(lease.accessId ? { access_id: lease.accessId } : {}),
      },
    });
    if (reply.status === 'busy' || reply.running) {
      await this.leases.reschedule(lease.sessionId, claimScore, Date.now() + LEASE_RUNNING_RECHECK_MS);
      return;
    }
    if (RETRY_STATUSES.has(reply.status)) {
      const attempts = await this.leases.countAttempt(lease.sessionId);
      if (attempts < LEASE_EXPIRE_ATTEMPTS_MAX) return; // the claim score is the retry time
      this.log.warn(
        `Session ${lease.sessionId} on edge ${lease.edgeId} was not expired after ${attempts} attempts; its lease is dropped.`,
      );
    } else {
      this.log.log(
        `Session ${lease.sessionId} on edge ${lease.edgeId} expired after idle (${reply.status}).`,
      );
    }
    await this.leases.release(lease.sessionId, claimScore);
  }
}
