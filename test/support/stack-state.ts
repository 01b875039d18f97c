// A fingerprint of everything a stack holds for one namespace and database: its Redis keys and
// values, its Postgres rows and its sessions stream. Suites compare two fingerprints to prove that
// a refused request changed nothing. What moves by itself is left out: edge presence (rewritten by
// every heartbeat), the sweep's round lock, the reaper's lease index and records, and the audit trail (refused calls are audited by design).
import { createHash } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Redis } from 'ioredis';
import pg from 'pg';

/**
 * The lease index and a session's lease record are the reaper's to rescore on its rounds; what a
 * request could change besides them (revision, epoch, sequence, meta, fence, ledger) stays watched.
 */
const MOVES_BY_ITSELF = [/:edge:[^:]+:presence$/, /:submission-round$/, /:leases(:\{\d+\})?$/, /:lease$/];
const UNWATCHED_TABLES = new Set(['audit_records', '_prisma_migrations']);

export interface StackStateSources {
  redis: Redis;
  namespace: string;
  databaseUrl: string;
  nc: NatsConnection;
  sessionsStream: string;
}

export class StackState {
  private readonly pg: pg.Client;
  private tables: string[] = [];

  private constructor(private readonly sources: StackStateSources) {
    this.pg = new pg.Client({ connectionString: sources.databaseUrl });
  }

  static async open(sources: StackStateSources): Promise<StackState> {
    const state = new StackState(sources);
    await state.pg.connect();
    const result = await state.pg.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    state.tables = result.rows.map((row) => row.table_name).filter((name) => !UNWATCHED_TABLES.has(name));
    return state;
  }

  async close(): Promise<void> {
    await this.pg.end();
  }

  /** Equal fingerprints: nothing watched changed in between. */
  async fingerprint(): Promise<string> {
    const [redis, postgres, stream] = await Promise.all([this.redis(), this.postgres(), this.stream()]);
    return JSON.stringify({ redis, postgres, stream });
  }

  /** Each watched key with a digest of its value, so a difference names the key. */
  private async redis(): Promise<Record<string, string>> {
    const { redis, namespace } = this.sources;
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${namespace}:*`, 'COUNT', 1000);
      keys.push(...batch.filter((key) => !MOVES_BY_ITSELF.some((pattern) => pattern.test(key))));
      cursor = next;
    } while (cursor !== '0');
    keys.sort();
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.dumpBuffer(key);
    const dumps = (await pipeline.exec()) ?? [];
    const digests: Record<string, string> = {};
    keys.forEach((key, index) => {
      const dump = dumps[index]?.[1];
      digests[key] = Buffer.isBuffer(dump)
        ? createHash('sha256').update(dump).digest('hex').slice(0, 16)
        : 'gone';
    });
    return digests;
  }

  private async postgres(): Promise<Record<string, string>> {
    const digests: Record<string, string> = {};
    for (const table of this.tables) {
      const result = await this.pg.query<{ digest: string | null }>(
        `SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) AS digest FROM "${table}" t`,
      );
      digests[table] = result.rows[0]?.digest ?? 'empty';
    }
    return digests;
  }

  private async stream(): Promise<string> {
    const jsm = await jetstreamManager(this.sources.nc);
    const info = await jsm.streams.info(this.sources.sessionsStream);
    return `${info.state.messages}:${info.state.last_seq}`;
  }
}
