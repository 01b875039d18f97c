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
    const edgeId = await this.connectors.requireOwned(actorId, request.edge_id);
    if (request.access_id === undefined || request.access_id === '') return { ok: true };
    const access =
      typeof request.access_id === 'string'
        ? await this.accesses.findOwned(actorId, request.access_id)
        : null;
    if (!access || access.edgeId !== edgeId) throw new AccessNotFoundError();
    return { ok: true, access: toAgentAccess(access) };
  }
}
