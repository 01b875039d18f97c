import { Inject, Injectable } from '@nestjs/common';
import { PRISMA, PrismaClient } from '#persistence';

/** Where a session's chain of applied journal rows ends, for JournalChainRepair. */
@Injectable()
export class JournalChainRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  /** The stream sequence of the session's last applied row; 0 when none is applied yet. */
  async lastApplied(sessionId: string): Promise<number> {
    const rows = await this.db.$queryRaw<{ last_stream_seq: bigint }[]>`
      SELECT last_stream_seq FROM journal_states WHERE session_id = ${sessionId}`;
    const last = rows[0]?.last_stream_seq;
    return last === undefined ? 0 : Number(last);
  }
}
