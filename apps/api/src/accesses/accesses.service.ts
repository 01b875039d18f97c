import { Injectable } from '@nestjs/common';
import { Limits, type AccessInput, type AccessListReply, type AgentAccess } from '#contracts';
import { Authorizer } from '../common/authorizer.js';
import { AccessNotFoundError, InvalidPageError } from '../common/errors.js';
import { ServiceClient } from '../common/service-client.js';
import { ACCESS_ID_PATTERN, ACCESSES_PAGE_MAX } from './accesses.schemas.js';

const DECIMAL = /^[0-9]{1,9}$/;

function pageNumber(raw: unknown, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  // A repeated parameter arrives as an array: as invalid as a non-number.
  if (typeof raw !== 'string' || !DECIMAL.test(raw))
    throw new InvalidPageError(`Page value ${JSON.stringify(raw)} is not a number.`);
  const value = Number(raw);
  if (value < 1 || value > max) throw new InvalidPageError(`Page value ${value} is out of range.`);
  return value;
}

/** AgentAccess CRUD, always scoped to the actor; history owns the rows. */
@Injectable()
export class AccessesService {
  constructor(
    private readonly services: ServiceClient,
    private readonly authorizer: Authorizer,
  ) {}

  list(actorId: string, page: unknown, pageSize: unknown): Promise<AccessListReply> {
    return this.services.history('historyAccessList', {
      actor_id: actorId,
      page: pageNumber(page, 1, ACCESSES_PAGE_MAX),
      page_size: pageNumber(pageSize, Limits.ACCESSES_PAGE_SIZE_DEFAULT, Limits.ACCESSES_PAGE_SIZE_MAX),
    });
  }

  async create(actorId: string, access: AccessInput): Promise<AgentAccess> {
    const reply = await this.services.history('historyAccessCreate', { actor_id: actorId, access });
    return reply.access;
  }

  async update(actorId: string, id: string, access: AccessInput): Promise<AgentAccess> {
    const checked = this.checkedId(id);
    try {
      const reply = await this.services.history('historyAccessUpdate', {
        actor_id: actorId,
        id: checked,
        access,
      });
      return reply.access;
    } finally {
      // Even a failed call may have changed the row; history's notice reaches other replicas.
      this.authorizer.forget(actorId);
    }
  }

  async remove(actorId: string, id: string): Promise<AgentAccess> {
    const checked = this.checkedId(id);
    try {
      const reply = await this.services.history('historyAccessDelete', { actor_id: actorId, id: checked });
      return reply.access;
    } finally {
      this.authorizer.forget(actorId);
    }
  }

  /** A malformed id cannot name a saved access: 404 without asking history. */
  private checkedId(id: string): string {
    if (!ACCESS_ID_PATTERN.test(id))
      throw new AccessNotFoundError(`Access id ${JSON.stringify(id)} is malformed.`);
    return id;
  }
}
