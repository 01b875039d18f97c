import type { VariableDocs } from '#config';

/** What history's own variables mean (docs/configuration.md is generated from this and config.ts). */
export const HISTORY_VARIABLE_DOCS: VariableDocs = {
  TETHER_DATABASE_URL: { meaning: 'PostgreSQL database of durable history (`postgresql://`).' },
  TETHER_DATABASE_MAX_CONNECTIONS: {
    meaning:
      "Postgres connections per replica, all pools together; size the server's `max_connections` for replicas × this.",
  },
  TETHER_HISTORY_KEY: {
    meaning:
      'Secret the at-rest encryption key of stored history is derived from (HKDF-SHA-256). Losing or changing it makes stored history unreadable; at least 32 characters, never the development value.',
  },
  TETHER_JOURNAL_MAX_ACK_PENDING: {
    meaning: 'Journal messages handed to one replica before it must ack some.',
  },
  TETHER_JOURNAL_WRITE_CONCURRENCY: {
    meaning:
      'Session batches of the journal consumer written at once; below `TETHER_DATABASE_MAX_CONNECTIONS` minus 2 (the authorize pool).',
  },
  TETHER_JOURNAL_COMPACTION_INTERVAL_MS: {
    meaning: 'How often a replica looks for journals to compact; 0 turns periodic compaction off.',
  },
  TETHER_JOURNAL_COMPACTION_MIN_TAIL_ROWS: {
    meaning: 'Compaction keeps at least this many rows per journal.',
  },
  TETHER_JOURNAL_COMPACTION_RETAIN_TAIL_MS: { meaning: 'Compaction keeps every row younger than this.' },
  TETHER_NATS_ACCOUNT: {
    meaning:
      'The NATS account\'s public key (or a file holding it) under which history mints edge users; set with the other three `TETHER_NATS_*` authority variables or none (docs/security.md "Edge credentials").',
  },
  TETHER_NATS_ACCOUNT_SIGNING_KEY: {
    meaning: 'The account signing key seed (or a file holding it) history signs edge user JWTs with.',
  },
  TETHER_NATS_OPERATOR_SIGNING_KEY: {
    meaning:
      'The operator signing key seed (or a file holding it) history re-signs the account JWT with when it revokes an edge.',
  },
  TETHER_NATS_SYSTEM_CREDS: {
    meaning:
      'Creds file of the NATS system user history pushes the account JWT (with its revocations) through.',
  },
};
