import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { configProblems, loadConfig } from '#config';
import { loadRouterConfig } from '../config.js';
import { checkRedisEnv, describeRedis, redisEnv, redisSettings } from './redis-topology.js';

// The fragment as config.ts uses it: spread in, checked, turned into settings.
const schema = z
  .object({ ...redisEnv })
  .superRefine(checkRedisEnv)
  .transform(redisSettings);

let dir: string;
let pem: string;
let passwordFile: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'redis-config-'));
  pem = join(dir, 'material.pem');
  writeFileSync(pem, 'not read by the config, only checked for readability');
  passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, 's3cret:with@odd/chars\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const problemsOf = (env: Record<string, string>) => configProblems(schema, env);

describe('Redis connection settings', () => {
  it('defaults to one local server, database 0, no auth, no TLS', () => {
    expect(loadConfig(schema, {})).toEqual({
      mode: 'standalone',
      node: { host: '127.0.0.1', port: 6379 },
      db: 0,
    });
  });

  it('reads user, password (escaped) and database from a redis:// URL', () => {
    expect(loadConfig(schema, { TETHER_REDIS_URL: 'redis://router:p%40ss@redis.example:6380/2' })).toEqual({
      mode: 'standalone',
      node: { host: 'redis.example', port: 6380 },
      db: 2,
      username: 'router',
      password: 'p@ss',
    });
  });

  it('turns TLS on for rediss:// with the CA and client certificate files', () => {
    const settings = loadConfig(schema, {
      TETHER_REDIS_URL: 'rediss://redis.example',
      TETHER_REDIS_TLS_CA: pem,
      TETHER_REDIS_TLS_CERT: pem,
      TETHER_REDIS_TLS_KEY: pem,
    });
    expect(settings).toMatchObject({
      mode: 'standalone',
      node: { host: 'redis.example', port: 6379 },
      tls: { caFile: pem, certFile: pem, keyFile: pem },
    });
    expect(loadConfig(schema, { TETHER_REDIS_URL: 'rediss://redis.example' }).tls).toEqual({});
  });
});

describe('Redis connection settings', () => {
  it('reads a Redis Cluster from a redis-cluster:// URL or from TETHER_REDIS_CLUSTER_NODES', () => {
    const nodes = [
      { host: '10.0.0.1', port: 7000 },
      { host: 'node-b', port: 7001 },
      { host: '::1', port: 7002 },
    ];
    expect(
      loadConfig(schema, { TETHER_REDIS_URL: 'redis-cluster://10.0.0.1:7000,node-b:7001,[::1]:7002' }),
    ).toEqual({
      mode: 'cluster',
      nodes,
    });
    expect(
      loadConfig(schema, {
        TETHER_REDIS_CLUSTER_NODES: '10.0.0.1:7000, node-b:7001,[::1]:7002',
        TETHER_REDIS_USERNAME: 'router',
        TETHER_REDIS_PASSWORD_FILE: passwordFile,
        TETHER_REDIS_TLS_CA: pem,
      }),
    ).toEqual({
      mode: 'cluster',
      nodes,
      username: 'router',
      password: 's3cret:with@odd/chars',
      tls: { caFile: pem },
    });
    expect(loadConfig(schema, { TETHER_REDIS_URL: 'rediss-cluster://a:7000' })).toEqual({
      mode: 'cluster',
      nodes: [{ host: 'a', port: 7000 }],
      tls: {},
    });
  });

  it('reads a Sentinel set-up: sentinels (default port 26379), master group, database, sentinel password', () => {
    expect(
      loadConfig(schema, {
        TETHER_REDIS_URL: 'redis-sentinel://:pw@s1,s2:26380/3?name=mymaster',
        TETHER_REDIS_SENTINEL_PASSWORD_FILE: passwordFile,
      }),
    ).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
      ],
      name: 'mymaster',
      db: 3,
      password: 'pw',
      sentinelPassword: 's3cret:with@odd/chars',
    });
  });
});

describe('Redis connection settings', () => {
  it.each([
    [{ TETHER_REDIS_URL: 'http://redis:6379' }, 'TETHER_REDIS_URL: must be a redis://'],
    [{ TETHER_REDIS_URL: 'redis://a:1,b:2' }, 'TETHER_REDIS_URL: names several hosts'],
    [{ TETHER_REDIS_URL: 'redis://a:99999' }, 'TETHER_REDIS_URL: "a:99999" is not a host:port'],
    [
      { TETHER_REDIS_URL: 'redis-sentinel://s1:26379' },
      'TETHER_REDIS_URL: is a redis-sentinel:// URL without ?name=',
    ],
    [{ TETHER_REDIS_URL: 'redis-cluster://a:7000/1' }, 'TETHER_REDIS_URL: names a database'],
    [{ TETHER_REDIS_URL: 'redis://a?name=x' }, 'TETHER_REDIS_URL: has an unknown query parameter "name"'],
    [
      { TETHER_REDIS_URL: 'redis://a', TETHER_REDIS_CLUSTER_NODES: 'b:7000' },
      'TETHER_REDIS_CLUSTER_NODES: is set together',
    ],
    [{ TETHER_REDIS_CLUSTER_NODES: ' , ' }, 'TETHER_REDIS_CLUSTER_NODES: names no host'],
    [{ TETHER_REDIS_URL: 'redis://u@a', TETHER_REDIS_USERNAME: 'v' }, 'TETHER_REDIS_USERNAME: is set but'],
    [
      { TETHER_REDIS_PASSWORD_FILE: '/nonexistent/password' },
      'TETHER_REDIS_PASSWORD_FILE: must name a readable file',
    ],
    [{ TETHER_REDIS_SENTINEL_PASSWORD_FILE: 'PW' }, 'TETHER_REDIS_SENTINEL_PASSWORD_FILE: is set but'],
  ])('refuses %j naming the variable', (env, expected) => {
    const resolved = Object.fromEntries(
      Object.entries(env).map(([key, value]) => [key, value === 'PW' ? passwordFile : value]),
    );
    expect(problemsOf(resolved).join('\n')).toContain(expected);
  });

  it('refuses TLS files with a plain URL, a certificate without its key, and two passwords', () => {
    expect(problemsOf({ TETHER_REDIS_URL: 'redis://a', TETHER_REDIS_TLS_CA: pem })).toEqual([
      expect.stringContaining('TETHER_REDIS_TLS_CA: is set but TETHER_REDIS_URL is not a TLS URL'),
    ]);
    expect(problemsOf({ TETHER_REDIS_URL: 'rediss://a', TETHER_REDIS_TLS_CERT: pem })).toEqual([
      expect.stringContaining('TETHER_REDIS_TLS_KEY: TETHER_REDIS_TLS_CERT and TETHER_REDIS_TLS_KEY'),
    ]);
    expect(
      problemsOf({ TETHER_REDIS_URL: 'redis://:pw@a', TETHER_REDIS_PASSWORD_FILE: passwordFile }),
    ).toEqual([
      expect.stringContaining('TETHER_REDIS_PASSWORD_FILE: is set but TETHER_REDIS_URL carries a password'),
    ]);
  });

  it('never puts the password in an error or in the log line', () => {
    const problems = problemsOf({ TETHER_REDIS_URL: 'redis://user:hunter2secret@a:1,b:2' });
    expect(problems.join('\n')).not.toContain('hunter2secret');
    const settings = loadConfig(schema, {
      TETHER_REDIS_URL: 'rediss-sentinel://user:hunter2secret@s1:1,s2:2?name=main',
    });
    expect(describeRedis(settings)).toBe('Redis master "main" via sentinels s1:1,s2:2 over TLS as user');
    expect(describeRedis(loadConfig(schema, { TETHER_REDIS_URL: 'redis://:hunter2secret@a:1' }))).toBe(
      'Redis a:1',
    );
  });

  it('reaches the router config as `redis`', () => {
    const config = loadRouterConfig({
      TETHER_EDGE_SECRET: 'router-config-edge-secret-0123',
      TETHER_JOURNAL_KEY: 'router-config-journal-key-0123456789abcdef',
      TETHER_REDIS_CLUSTER_NODES: '127.0.0.1:7100,127.0.0.1:7101',
    });
    expect(config.redis).toEqual({
      mode: 'cluster',
      nodes: [
        { host: '127.0.0.1', port: 7100 },
        { host: '127.0.0.1', port: 7101 },
      ],
    });
  });
});
