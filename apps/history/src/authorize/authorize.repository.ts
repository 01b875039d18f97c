import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type pg from 'pg';
import { createGuardedPool } from '#persistence';
import type { StoredAccess } from '../accesses/accesses.repository.js';
import { HISTORY_CONFIG } from '../common/tokens.js';
import type { HistoryConfig } from '../config.js';

/** What one authorization needs to know: the owned connector, and the owned access if named. */
export interface AuthorizeLookup {
  /** Null when the actor owns no connector with this id. */
  connectorId: bigint | null;
  /** Null when no access was named, or the actor owns no access with this id (any edge). */
  access: StoredAccess | null;
}

interface LookupRow {
  connector_id: string | null;
  access_id: string | null;
  name: string | null;
  kind: string | null;
  edge_id: string | null;
  installation_id: string | null;
  project: string | null;
}

/**
 * Both lookups in one named (prepared once per connection) statement. Each side is a
 * primary-key lookup filtered by owner; the outer join of the one-row `one` with two at-most-one
 * row sides yields exactly one row whether either exists or not. Ids travel as text: pg would
 * otherwise return int8 as strings anyway.
 */
const LOOKUP: { name: string; text: string } = {
  name: 'tether_authorize_lookup',
  text: `SELECT c.id::text AS connector_id, a.id AS access_id, a.name, a.kind, a.edge_id::text AS edge_id,
                a.installation_id, a.project
         FROM (SELECT 1) AS one
         LEFT JOIN connectors c ON c.id = $1::bigint AND c.owner_id = $2::text
         LEFT JOIN agent_accesses a ON a.id = $3::bpchar AND a.owner_id = $2::text`,
};

/**
 * The lookups of `history.authorize`, which runs before every edge call. Through Prisma they
 * cost two pool round trips and most of history's CPU per poll (the B1 profile: query
 * compilation, result mapping, the adapter); here they are one prepared statement over a small
 * pool of its own.
 */
@Injectable()
export class AuthorizeRepository implements OnApplicationShutdown {
  private readonly log = new Logger(AuthorizeRepository.name);
  private readonly pool: pg.Pool;

  constructor(@Inject(HISTORY_CONFIG) config: HistoryConfig) {
    // Its share of TETHER_DATABASE_MAX_CONNECTIONS (config.ts); Prisma's pool has the rest.
    this.pool = createGuardedPool({
      connectionString: config.databaseUrl,
      max: config.databasePools.authorize,
      onConnectionError: (error) => this.log.warn(`Authorize pool connection lost: ${error.message}`),
    });
  }

  async lookup(ownerId: string, edgeId: bigint, accessId: string | undefined): Promise<AuthorizeLookup> {
    const { rows } = await this.pool.query<LookupRow>({
      ...LOOKUP,
      values: [edgeId.toString(), ownerId, accessId || null],
    });
    const row = rows[0];
    if (!row) return { connectorId: null, access: null };
    const access =
      row.access_id !== null && row.edge_id !== null
        ? {
            id: row.access_id,
            name: row.name ?? '',
            kind: row.kind ?? '',
            edgeId: BigInt(row.edge_id),
            installationId: row.installation_id ?? '',
            project: row.project ?? '',
          }
        : null;
    return { connectorId: row.connector_id === null ? null : BigInt(row.connector_id), access };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
