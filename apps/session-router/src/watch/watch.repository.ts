import { Injectable } from '@nestjs/common';
import { RedisRepository } from '../common/redis-repository.js';

export interface StoredRevision {
  revision: number;
  closed: boolean;
}

@Injectable()
export class WatchRepository extends RedisRepository {
  /** The session's stored revision, or null when Redis does not know it (new, or flushed). */
  async revision(sessionId: string): Promise<StoredRevision | null> {
    const [[revError, revision], [metaError, closed]] = (await this.redis
      .pipeline()
      .get(this.keys.revision(sessionId))
      .hget(this.keys.meta(sessionId), 'closed')
      .exec()) as [[Error | null, string | null], [Error | null, string | null]];
    if (revError) throw revError;
    if (metaError) throw metaError;
    if (revision === null) return null;
    return { revision: Number(revision), closed: closed === '1' };
  }
}
