import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-client.js';

/**
 * A Lua script run by its SHA (EVALSHA), loaded on first use or after a Redis restart (NOSCRIPT).
 * Scripts touch keys of one session only, so they stay valid on Redis Cluster.
 */
export class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
