import { Inject, Injectable } from '@nestjs/common';
import type { AuditRecord } from '#contracts';
import { PRISMA, PrismaClient } from '#persistence';

@Injectable()
export class AuditRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  /** Insert-or-ignore on the record id, so a redelivered record is stored once. */
  async save(record: AuditRecord): Promise<boolean> {
    const { count } = await this.db.auditRecord.createMany({
      data: [
        {
          id: record.id,
          actorId: record.actor_id,
          action: record.action,
          edgeId: record.edge_id,
          accessId: record.access_id ?? null,
          sessionId: record.session_id ?? null,
          status: record.status,
          success: record.success,
          traceId: record.trace_id ?? null,
          occurredAt: new Date(record.occurred_at),
        },
      ],
      skipDuplicates: true,
    });
    return count > 0;
  }
}
