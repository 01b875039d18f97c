import { ConfigError } from '#config';
import { AUTHORIZE_POOL_CONNECTIONS, loadHistoryConfig } from './config.js';

const BASE = {
  TETHER_EDGE_SECRET: 'history-spec-edge-secret-0123456789',
  TETHER_HISTORY_KEY: 'history-spec-at-rest-key-0123456789abcdef',
  TETHER_JOURNAL_KEY: 'history-spec-journal-key-0123456789abcdef',
};

describe('history config: database connections', () => {
  it('splits one per-replica budget between Prisma and the authorize pool', () => {
    expect(loadHistoryConfig(BASE)).toMatchObject({
      databaseMaxConnections: 10,
      databasePools: { prisma: 10 - AUTHORIZE_POOL_CONNECTIONS, authorize: AUTHORIZE_POOL_CONNECTIONS },
    });
    expect(loadHistoryConfig({ ...BASE, TETHER_DATABASE_MAX_CONNECTIONS: '30' }).databasePools).toEqual({
      prisma: 30 - AUTHORIZE_POOL_CONNECTIONS,
      authorize: AUTHORIZE_POOL_CONNECTIONS,
    });
  });

  it('refuses a budget that leaves request handlers no connection beside the journal writers', () => {
    const env = {
      ...BASE,
      TETHER_DATABASE_MAX_CONNECTIONS: String(AUTHORIZE_POOL_CONNECTIONS + 4),
      TETHER_JOURNAL_WRITE_CONCURRENCY: '4',
    };
    expect(() => loadHistoryConfig(env)).toThrow(ConfigError);
    expect(() => loadHistoryConfig(env)).toThrow(/TETHER_JOURNAL_WRITE_CONCURRENCY/);
    expect(
      loadHistoryConfig({ ...env, TETHER_DATABASE_MAX_CONNECTIONS: String(AUTHORIZE_POOL_CONNECTIONS + 5) })
        .databasePools.prisma,
    ).toBe(5);
  });
});

describe('history config: the journal key', () => {
  it('is required, at least 32 characters, with previous keys for a rotation', () => {
    const { TETHER_JOURNAL_KEY: _key, ...withoutKey } = BASE;
    expect(() => loadHistoryConfig(withoutKey)).toThrow(/TETHER_JOURNAL_KEY/);
    expect(() => loadHistoryConfig({ ...BASE, TETHER_JOURNAL_KEY: 'short' })).toThrow(/TETHER_JOURNAL_KEY/);
    expect(loadHistoryConfig(BASE).journalKeys).toEqual({ current: BASE.TETHER_JOURNAL_KEY, previous: [] });
    const previous = 'history-spec-old-journal-key-0123456789ab';
    expect(
      loadHistoryConfig({ ...BASE, TETHER_JOURNAL_PREVIOUS_KEYS: ` ${previous} ,` }).journalKeys.previous,
    ).toEqual([previous]);
    expect(() => loadHistoryConfig({ ...BASE, TETHER_JOURNAL_PREVIOUS_KEYS: 'short' })).toThrow(
      /TETHER_JOURNAL_PREVIOUS_KEYS/,
    );
  });
});
