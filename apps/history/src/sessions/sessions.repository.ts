import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient } from '#persistence';

export interface SessionScope {
  ownerId: string;
  accessId: string;
  edgeId: bigint;
}

export interface StoredSessionSummary {
  sessionId: string;
  /** Ciphertext of title, thread id and project (see common/stored-session.ts). */
  summary: Uint8Array | null;
  titleOverride: Uint8Array | null;
  running: boolean;
  closed: boolean;
  status: string;
  updatedAt: Date;
}

@Injectable()
export class SessionsRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  /** One page of live (not tombstoned) rows, newest first; served by session_histories_list_idx. */
  async listPage(
    scope: SessionScope,
    skip: number,
    take: number,
  ): Promise<{ rows: StoredSessionSummary[]; total: number }> {
    const where = { ...scope, deleted: false };
    const [rows, total] = await this.db.$transaction([
      this.db.sessionHistory.findMany({
        where,
        orderBy: [{ updatedAt: 'desc' }, { sessionId: 'desc' }],
        skip,
        take,
        select: {
          sessionId: true,
          summary: true,
          titleOverride: true,
          running: true,
          closed: true,
          status: true,
          updatedAt: true,
        },
      }),
      this.db.sessionHistory.count({ where }),
    ]);
    return { rows, total };
  }
}
