import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient } from '#persistence';

export interface StoredConnector {
  id: bigint;
  name: string;
  device: string | null;
  credentialGeneration: number;
  natsUserKey: string | null;
}

const CONNECTOR_FIELDS = {
  id: true,
  name: true,
  device: true,
  credentialGeneration: true,
  natsUserKey: true,
} as const;

/** Serialises everyone who builds the account JWT's revocation list, across replicas. */
const REVOCATION_LIST_LOCK = 0x7e7e_0011;

/** What a rotation or deletion revoked: the old NATS user (operator mode only). */
export interface RevokedCredentials {
  connector: StoredConnector;
  revokedKey: string | null;
}

@Injectable()
export class ConnectorsRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  findOwned(ownerId: string, id: bigint): Promise<StoredConnector | null> {
    return this.db.connector.findFirst({ where: { id, ownerId }, select: CONNECTOR_FIELDS });
  }

  /** The current token generation of a connector, or null when it does not exist. */
  async generationOf(id: bigint): Promise<number | null> {
    const row = await this.db.connector.findUnique({ where: { id }, select: { credentialGeneration: true } });
    return row?.credentialGeneration ?? null;
  }

  /** One page in id order after `after`; `limit + 1` rows are read so the caller sees if more follow. */
  listOwned(ownerId: string, after: bigint | undefined, limit: number): Promise<StoredConnector[]> {
    return this.db.connector.findMany({
      where: { ownerId, ...(after !== undefined && { id: { gt: after } }) },
      orderBy: { id: 'asc' },
      take: limit + 1,
      select: CONNECTOR_FIELDS,
    });
  }

  /**
   * Creates a connector unless the owner already has `max`, then lets `credentials` mint for
   * its id; under a per-owner lock, so concurrent enrollments cannot pass the bound together.
   */
  async createBounded(
    ownerId: string,
    max: number,
    fields: { name: string; device: string | undefined },
    credentials: (id: bigint) => Promise<string | null>,
  ): Promise<StoredConnector | null> {
    return this.db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`connectors:${ownerId}`}))`;
      if ((await tx.connector.count({ where: { ownerId } })) >= max) return null;
      const created = await tx.connector.create({
        data: { ownerId, name: fields.name, device: fields.device ?? null },
        select: { id: true },
      });
      const natsUserKey = await credentials(created.id);
      return tx.connector.update({
        where: { id: created.id },
        data: { natsUserKey },
        select: CONNECTOR_FIELDS,
      });
    });
  }

  /** Next generation and NATS user for an owned connector; the old user joins the revoked ones. */
  async rotate(
    ownerId: string,
    id: bigint,
    credentials: (generation: number) => Promise<string | null>,
  ): Promise<RevokedCredentials | null> {
    return this.db.$transaction(async (tx) => {
      const current = await tx.connector.findFirst({ where: { id, ownerId }, select: CONNECTOR_FIELDS });
      if (!current) return null;
      if (current.natsUserKey) {
        await tx.revokedNatsUser.create({ data: { publicKey: current.natsUserKey, edgeId: id } });
      }
      const generation = current.credentialGeneration + 1;
      const natsUserKey = await credentials(generation);
      const connector = await tx.connector.update({
        where: { id },
        data: { credentialGeneration: generation, natsUserKey },
        select: CONNECTOR_FIELDS,
      });
      return { connector, revokedKey: current.natsUserKey };
    });
  }

  /** Deletes an owned connector (its accesses go with it); its NATS user joins the revoked ones. */
  async delete(ownerId: string, id: bigint): Promise<RevokedCredentials | null> {
    return this.db.$transaction(async (tx) => {
      const current = await tx.connector.findFirst({ where: { id, ownerId }, select: CONNECTOR_FIELDS });
      if (!current) return null;
      if (current.natsUserKey) {
        await tx.revokedNatsUser.create({ data: { publicKey: current.natsUserKey, edgeId: id } });
      }
      await tx.connector.delete({ where: { id } });
      return { connector: current, revokedKey: current.natsUserKey };
    });
  }

  /**
   * Runs `publish` with every revoked NATS user (public key → unix seconds), holding a lock so
   * replicas publish one after another and the last list published is the longest.
   */
  async withRevocations<T>(publish: (revocations: Record<string, number>) => Promise<T>): Promise<T> {
    return this.db.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${REVOCATION_LIST_LOCK})`;
        const rows = await tx.revokedNatsUser.findMany({ select: { publicKey: true, revokedAt: true } });
        const revocations: Record<string, number> = {};
        for (const row of rows) revocations[row.publicKey] = Math.ceil(row.revokedAt.getTime() / 1000);
        return publish(revocations);
      },
      // Building the list is quick; pushing it waits for a NATS round trip (resolver.ts bound).
      { timeout: 15_000 },
    );
  }
}
