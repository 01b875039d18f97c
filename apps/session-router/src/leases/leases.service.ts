import { Injectable, Logger } from '@nestjs/common';
import type { EdgeAgentRequest } from '#contracts';
import { SESSION_ID_PATTERN } from '../common/limits.js';
import { renewsLease } from './lease-policy.js';
import { LeasesRepository } from './leases.repository.js';

/** Renews idle leases on user actions. */
@Injectable()
export class LeasesService {
  private readonly log = new Logger(LeasesService.name);

  constructor(private readonly leases: LeasesRepository) {}

  /**
   * Renews the lease of the session an action names (or, for `start`, the session it created).
   * A Redis failure is logged, never surfaced: losing one renewal must not fail the user's action.
   */
  async touch(actorId: string, request: EdgeAgentRequest, sessionId = request.session_id): Promise<void> {
    if (!sessionId || !renewsLease(request.action) || !SESSION_ID_PATTERN.test(sessionId)) return;
    try {
      await this.leases.touch({
        sessionId,
        edgeId: request.edge_id,
        ownerId: actorId,
        accessId: request.access_id,
        resetAge: request.action === 'resume' || request.action === 'start',
        now: Date.now(),
      });
    } catch (error) {
      this.log.warn(`Lease of session ${sessionId} was not renewed: ${(error as Error).message}`);
    }
  }
}
