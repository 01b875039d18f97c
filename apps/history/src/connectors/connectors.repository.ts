import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient } from '#persistence';

export interface StoredConnector {
  id: bigint;
  name: string;
  device: string | null;
}

const CONNECTOR_FIELDS = { id: true, name: true, device: true } as const;

@Injectable()
export class ConnectorsRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  findOwned(ownerId: string, id: bigint): Promise<StoredConnector | null> {
    return this.db.connector.findFirst({ where: { id, ownerId }, select: CONNECTOR_FIELDS });
  }

  listOwned(ownerId: string, limit: number): Promise<StoredConnector[]> {
    return this.db.connector.findMany({
      where: { ownerId },
      orderBy: { id: 'asc' },
      take: limit,
      select: CONNECTOR_FIELDS,
    });
  }

  create(ownerId: string, name: string, device: string | undefined): Promise<StoredConnector> {
    return this.db.connector.create({
      data: { ownerId, name, device: device ?? null },
      select: CONNECTOR_FIELDS,
    });
  }
}
