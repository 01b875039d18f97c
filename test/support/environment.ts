// Where the integration and e2e suites find NATS, Redis and Postgres. CI (and this machine) sets
// TETHER_TEST_NATS_URL, TETHER_TEST_REDIS_URL and TETHER_TEST_DATABASE_URL to running services;
// elsewhere the suites start them with testcontainers. Each suite isolates itself: its own
// subject namespace (which also prefixes its stream and Redis keys) and its own database.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface TestServices {
  natsUrl: string;
  redisUrl: string;
  /** A database URL whose user may CREATE DATABASE. */
  databaseUrl: string;
}

let services: Promise<TestServices> | undefined;
const containers: { stop(): Promise<unknown> }[] = [];

async function startContainers(): Promise<TestServices> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const { RedisContainer } = await import('@testcontainers/redis');
  const [nats, redis, postgres] = await Promise.all([
    new GenericContainer('nats:2.11-alpine')
      .withCommand(['-js'])
      .withExposedPorts(4222)
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .start(),
    new RedisContainer('redis:7-alpine').start(),
    new PostgreSqlContainer('postgres:16-alpine').start(),
  ]);
  containers.push(nats, redis, postgres);
  return {
    natsUrl: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
    redisUrl: redis.getConnectionUrl(),
    databaseUrl: postgres.getConnectionUri(),
  };
}

/** The shared services, from TETHER_TEST_* or from containers started once per worker. */
export function testServices(): Promise<TestServices> {
  services ??= (async () => {
    const { TETHER_TEST_NATS_URL, TETHER_TEST_REDIS_URL, TETHER_TEST_DATABASE_URL } = process.env;
    if (TETHER_TEST_NATS_URL && TETHER_TEST_REDIS_URL && TETHER_TEST_DATABASE_URL) {
      return {
        natsUrl: TETHER_TEST_NATS_URL,
        redisUrl: TETHER_TEST_REDIS_URL,
        databaseUrl: TETHER_TEST_DATABASE_URL,
      };
    }
    return startContainers();
  })();
  return services;
}

export async function stopTestContainers(): Promise<void> {
  await Promise.allSettled(containers.splice(0).map((container) => container.stop()));
}

/** A fresh namespace for one suite: its subjects, stream and Redis keys start with it. */
export function uniqueNamespace(label: string): string {
  const clean =
    label
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')
      .slice(0, 12) || 't';
  return `t${clean}${randomBytes(4).toString('hex')}`;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A new database with every migration applied, dropped by `drop()`; on the shared server, or on
 * the one `adminUrl` names (a suite's private cluster).
 */
export async function createTestDatabase(label: string, adminUrl?: string): Promise<TestDatabase> {
  const databaseUrl = adminUrl ?? (await testServices()).databaseUrl;
  const name = `tether_${uniqueNamespace(label).replace(/-/g, '_')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(databaseUrl, name);
  await run(process.execPath, ['scripts/migrate.mjs', 'deploy'], {
    env: { ...process.env, DATABASE_URL: url },
  });
  return {
    url,
    async drop() {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
