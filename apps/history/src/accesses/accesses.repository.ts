import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient } from '#persistence';
import { dropSessionContent, TOMBSTONE } from '../common/session-rows.js';

export interface StoredAccess {
  id: string;
  name: string;
  kind: string;
  edgeId: bigint;
  installationId: string;
  project: string;
}

export interface AccessFields {
  name: string;
  kind: string;
  edgeId: bigint;
  installationId: string;
  project: string;
}

const ACCESS_FIELDS = {
  id: true,
  name: true,
  kind: true,
  edgeId: true,
  installationId: true,
  project: true,
} as const;

@Injectable()
export class AccessesRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  async listOwned(
    ownerId: string,
    skip: number,
    take: number,
  ): Promise<{ items: StoredAccess[]; total: number }> {
    const [items, total] = await this.db.$transaction([
      this.db.agentAccess.findMany({
        where: { ownerId },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        skip,
        take,
        select: ACCESS_FIELDS,
      }),
      this.db.agentAccess.count({ where: { ownerId } }),
    ]);
    return { items, total };
  }

  findOwned(ownerId: string, id: string): Promise<StoredAccess | null> {
    return this.db.agentAccess.findFirst({ where: { id, ownerId }, select: ACCESS_FIELDS });
  }

  /** Creates the access unless the owner has `max` already (under a per-owner lock); else null. */
  createBounded(
    ownerId: string,
    max: number,
    id: string,
    fields: AccessFields,
  ): Promise<StoredAccess | null> {
    return this.db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`accesses:${ownerId}`}))`;
      if ((await tx.agentAccess.count({ where: { ownerId } })) >= max) return null;
      return tx.agentAccess.create({ data: { id, ownerId, ...fields }, select: ACCESS_FIELDS });
    });
  }

  /** The updated access, or null when no access of this owner has the id. */
  async updateOwned(ownerId: string, id: string, fields: AccessFields): Promise<StoredAccess | null> {
    return this.db.$transaction(async (tx) => {
      const { count } = await tx.agentAccess.updateMany({ where: { id, ownerId }, data: fields });
      if (count === 0) return null;
      return tx.agentAccess.findFirst({ where: { id, ownerId }, select: ACCESS_FIELDS });
    });
  }

  /**
   * Deletes the access and everything stored under it, in one transaction: session rows become
   * tombstones without payload or title (so a late journal message cannot revive them),
   * archived windows and journal rows go. The access row is deleted FIRST: that takes its row
   * lock, which the journal writer's `FOR SHARE` check waits on, so a session saved concurrently
   * is either refused or committed before the tombstoning statement runs (and then tombstoned).
   */
  async deleteOwned(ownerId: string, id: string): Promise<StoredAccess | null> {
    return this.db.$transaction(async (tx) => {
      const access = await tx.agentAccess.findFirst({ where: { id, ownerId }, select: ACCESS_FIELDS });
      if (!access) return null;
      const { count } = await tx.agentAccess.deleteMany({ where: { id, ownerId } });
      if (count === 0) return null;
      const scope = { ownerId, accessId: id };
      await tx.sessionHistory.updateMany({
        where: scope,
        data: { ...TOMBSTONE, updatedAt: new Date() },
      });
      await dropSessionContent(tx, scope);
      return access;
    });
  }
}
