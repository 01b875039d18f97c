import { Injectable } from '@nestjs/common';
import type { AuthorizeReply, AuthorizeRequest } from '#contracts';
import { toAgentAccess } from '../accesses/access.mapper.js';
import { AccessNotFoundError, ConnectorNotFoundError } from '../common/errors.js';
import { parseEdgeId, requireActorId } from '../common/ids.js';
import { AuthorizeRepository } from './authorize.repository.js';

/**
 * The check the api (and the router after a wait) runs before every edge call (reference §2.1
 * "Manager authorization, repeated on every call"): the connector is the actor's, and a named
 * access is the actor's and saved for that same connector.
 */
@Injectable()
export class AuthorizeService {
  constructor(private readonly repository: AuthorizeRepository) {}

  async authorize(request: AuthorizeRequest): Promise<AuthorizeReply> {
    const actorId = requireActorId(request.actor_id);
    const edgeId = parseEdgeId(request.edge_id);
    if (edgeId === null) throw new ConnectorNotFoundError();
    const accessId = request.access_id;
    // One statement for both lookups: this runs before every edge call. A connector that is not
    // the actor's still wins over a missing access (it is checked first).
    const { connectorId, access } = await this.repository.lookup(actorId, edgeId, accessId);
    if (connectorId === null) throw new ConnectorNotFoundError();
    if (!accessId) return { ok: true };
    if (!access || access.edgeId !== connectorId) throw new AccessNotFoundError();
    return { ok: true, access: toAgentAccess(access) };
  }
}
