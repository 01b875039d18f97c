import { Injectable } from '@nestjs/common';
import type { AuthorizeReply, AuthorizeRequest } from '#contracts';
import { toAgentAccess } from '../accesses/access.mapper.js';
import { AccessesRepository } from '../accesses/accesses.repository.js';
import { AccessNotFoundError } from '../common/errors.js';
import { requireActorId } from '../common/ids.js';
import { ConnectorsService } from '../connectors/connectors.service.js';

/**
 * The check the api (and the router after a wait) runs before every edge call (reference §2.1
 * "Manager authorization, repeated on every call"): the connector is the actor's, and a named
 * access is the actor's and saved for that same connector.
 */
@Injectable()
export class AuthorizeService {
  constructor(
    private readonly connectors: ConnectorsService,
    private readonly accesses: AccessesRepository,
  ) {}

  async authorize(request: AuthorizeRequest): Promise<AuthorizeReply> {
    const actorId = requireActorId(request.actor_id);
    const accessId = request.access_id;
    // Both lookups at once: this runs before every edge call, so its latency is on the hot path.
    // A connector that is not the actor's still wins over a missing access (it is checked first).
    const [edgeId, access] = await Promise.all([
      this.connectors.requireOwned(actorId, request.edge_id),
      accessId ? this.accesses.findOwned(actorId, accessId) : Promise.resolve(null),
    ]);
    if (!accessId) return { ok: true };
    if (!access || access.edgeId !== edgeId) throw new AccessNotFoundError();
    return { ok: true, access: toAgentAccess(access) };
  }
}
