// Where the benchmarks find NATS, Redis and Postgres: TETHER_BENCH_* first, then the test
// suites' TETHER_TEST_*, then this machine's local services. Benchmarks are scripts, not apps,
// so they read the environment here directly.
const env = process.env;

export interface BenchServices {
  natsUrl: string;
  redisUrl: string;
  /** A database URL whose user may CREATE DATABASE (each run makes and drops its own). */
  databaseUrl: string;
}

export function benchServices(): BenchServices {
  const services = {
    natsUrl: env.TETHER_BENCH_NATS_URL ?? env.TETHER_TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
    redisUrl: env.TETHER_BENCH_REDIS_URL ?? env.TETHER_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    databaseUrl:
      env.TETHER_BENCH_DATABASE_URL ??
      env.TETHER_TEST_DATABASE_URL ??
      'postgresql://postgres@127.0.0.1:5432/test',
  };
  // createTestDatabase (test/support) finds the server through TETHER_TEST_*; point it at ours.
  env.TETHER_TEST_NATS_URL = services.natsUrl;
  env.TETHER_TEST_REDIS_URL = services.redisUrl;
  env.TETHER_TEST_DATABASE_URL = services.databaseUrl;
  return services;
}
