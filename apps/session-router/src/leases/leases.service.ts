import { Injectable, Logger } from '@nestjs/common';
import type { EdgeAgentRequest } from '#contracts';
import { SESSION_ID_PATTERN } from '../common/limits.js';
import { renewsLease } from './lease-policy.js';
import { LeasesRepository } from './leases.repository.js';

/**
 * A renewal this recent (by this router, with the same owner, edge and access) already moved the
 * lease: writing it again would change its due time by less than this, against idle limits of
 * 90 s and more. Repeated polls and watches of one session skip two Redis round trips (B1).
 */
export const LEASE_RENEWAL_INTERVAL_MS = 1_000;
/** Bound on remembered renewals; beyond it the memory starts over (every session renews once). */
const RENEWALS_MAX = 10_000;

interface Renewal {
  key: string;
  at: number;
}

/** Renews idle leases on user actions. */
@Injectable()
export class LeasesService {
  private readonly log = new Logger(LeasesService.name);
  /** session id → the last renewal this router wrote for it. */
  private readonly renewed = new Map<string, Renewal>();

  constructor(private readonly leases: LeasesRepository) {}

  /**
   * Renews the lease of the session an action names (or, for `start`, the session it created).
   * A Redis failure is logged, never surfaced: losing one renewal must not fail the user's action.
   * `resume` and `start` (a fresh runtime age) always write.
   */
  async touch(actorId: string, request: EdgeAgentRequest, sessionId = request.session_id): Promise<void> {
    if (!sessionId || !renewsLease(request.action) || !SESSION_ID_PATTERN.test(sessionId)) return;
    const resetAge = request.action === 'resume' || request.action === 'start';
    const now = Date.now();
    const key = `${actorId}\u0000${request.edge_id}\u0000${request.access_id ?? ''}`;
    const last = this.renewed.get(sessionId);
    if (!resetAge && last && last.key === key && now - last.at < LEASE_RENEWAL_INTERVAL_MS) return;
    if (this.renewed.size >= RENEWALS_MAX) this.renewed.clear();
    const renewal = { key, at: now };
    this.renewed.set(sessionId, renewal);
    try {
      await this.leases.touch({
        sessionId,
        edgeId: request.edge_id,
        ownerId: actorId,
        accessId: request.access_id,
        resetAge,
        now,
      });
    } catch (error) {
      // Not written: the next action must try again.
      if (this.renewed.get(sessionId) === renewal) this.renewed.delete(sessionId);
      this.log.warn(`Lease of session ${sessionId} was not renewed: ${(error as Error).message}`);
    }
  }
}
