// How the router reaches Redis: one server, a Redis Cluster or a Sentinel-managed master, with
// TLS and an ACL user. Parsed and checked once at boot (config.ts spreads `redisEnv` in and runs
// `checkRedisEnv`); a bad combination fails naming the variable, and no message ever carries the
// password (it comes from the URL or a file and only reaches the client options).
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { optionalStringVar, readableFileVar } from '#config';

export interface RedisAddress {
  host: string;
  port: number;
}

export interface RedisTlsSettings {
  /** CA bundle that signed the servers' certificates; absent: the system's trust store. */
  caFile?: string;
  /** Client certificate and its key (mutual TLS); always both or neither. */
  certFile?: string;
  keyFile?: string;
}

interface RedisAuth {
  username?: string;
  password?: string;
  /** Absent: plain TCP. */
  tls?: RedisTlsSettings;
}

export type RedisSettings =
  | (RedisAuth & { mode: 'standalone'; node: RedisAddress; db: number })
  | (RedisAuth & { mode: 'cluster'; nodes: RedisAddress[] })
  | (RedisAuth & {
      mode: 'sentinel';
      sentinels: RedisAddress[];
      /** The master group the sentinels watch (`sentinel monitor <name> …`). */
      name: string;
      db: number;
      sentinelPassword?: string;
    });

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const SCHEMES = ['redis', 'rediss', 'redis-cluster', 'rediss-cluster', 'redis-sentinel', 'rediss-sentinel'];
const DEFAULT_PORT = { redis: 6379, sentinel: 26379 };
/** scheme://[user[:password]@]host:port[,host:port…][/db][?query] */
const URL_SHAPE = /^([a-z-]+):\/\/(?:([^@/]*)@)?([^/?#@]+)(?:\/(\d*))?(?:\?([^#]*))?$/;
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/;

/** The zod fragment config.ts spreads into its schema, followed by `.superRefine(checkRedisEnv)`. */
export const redisEnv = {
  TETHER_REDIS_URL: optionalStringVar(),
  TETHER_REDIS_CLUSTER_NODES: optionalStringVar(),
  TETHER_REDIS_USERNAME: optionalStringVar(),
  TETHER_REDIS_PASSWORD_FILE: readableFileVar(),
  TETHER_REDIS_SENTINEL_PASSWORD_FILE: readableFileVar(),
  TETHER_REDIS_TLS_CA: readableFileVar(),
  TETHER_REDIS_TLS_CERT: readableFileVar(),
  TETHER_REDIS_TLS_KEY: readableFileVar(),
};

export interface RedisEnv {
  TETHER_REDIS_URL?: string;
  TETHER_REDIS_CLUSTER_NODES?: string;
  TETHER_REDIS_USERNAME?: string;
  TETHER_REDIS_PASSWORD_FILE?: string;
  TETHER_REDIS_SENTINEL_PASSWORD_FILE?: string;
  TETHER_REDIS_TLS_CA?: string;
  TETHER_REDIS_TLS_CERT?: string;
  TETHER_REDIS_TLS_KEY?: string;
}

/** A configuration mistake, attributed to the variable that carries it. */
class RedisConfigProblem extends Error {
  constructor(
    readonly variable: keyof RedisEnv,
    message: string,
  ) {
    super(message);
  }
}

interface ParsedUrl {
  kind: 'redis' | 'cluster' | 'sentinel';
  tls: boolean;
  username?: string;
  password?: string;
  hosts: RedisAddress[];
  db?: number;
  query: URLSearchParams;
}

function parseHosts(list: string, defaultPort: number, variable: keyof RedisEnv): RedisAddress[] {
  const parts = list
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  if (parts.length === 0) throw new RedisConfigProblem(variable, 'names no host');
  return parts.map((part) => {
    const match = HOST_PORT.exec(part);
    const port = Number(match?.[2] ?? defaultPort);
    if (!match || port < 1 || port > 65_535) {
      throw new RedisConfigProblem(variable, `"${part}" is not a host:port`);
    }
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
  });
}

function decode(part: string | undefined): string | undefined {
  if (part === undefined || part === '') return undefined;
  try {
    return decodeURIComponent(part);
  } catch {
    throw new RedisConfigProblem('TETHER_REDIS_URL', 'has a badly escaped user or password');
  }
}

/** Never echoes the URL: it may hold a password. */
function parseUrl(url: string): ParsedUrl {
  const match = URL_SHAPE.exec(url.trim());
  const scheme = match?.[1] ?? '';
  if (!match || !SCHEMES.includes(scheme)) {
    throw new RedisConfigProblem(
      'TETHER_REDIS_URL',
      `must be a ${SCHEMES.map((name) => `${name}://`).join(', ')} URL`,
    );
  }
  const kind = scheme.endsWith('cluster') ? 'cluster' : scheme.endsWith('sentinel') ? 'sentinel' : 'redis';
  const [user, ...rest] = (match[2] ?? '').split(':');
  const hosts = parseHosts(
    match[3]!,
    kind === 'sentinel' ? DEFAULT_PORT.sentinel : DEFAULT_PORT.redis,
    'TETHER_REDIS_URL',
  );
  if (kind === 'redis' && hosts.length > 1) {
    throw new RedisConfigProblem(
      'TETHER_REDIS_URL',
      'names several hosts: use redis-cluster:// or redis-sentinel:// for more than one',
    );
  }
  const db = match[4] ? Number(match[4]) : undefined;
  return {
    kind,
    tls: scheme.startsWith('rediss'),
    username: decode(user),
    password: decode(rest.length > 0 ? rest.join(':') : undefined),
    hosts,
    ...(db !== undefined && { db }),
    query: new URLSearchParams(match[5] ?? ''),
  };
}

function readSecret(variable: keyof RedisEnv, path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    // One trailing newline is how editors and `kubectl create secret --from-file` leave it.
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch {
    throw new RedisConfigProblem(variable, 'must name a readable file');
  }
}

function tlsOf(env: RedisEnv, urlTls: boolean): RedisTlsSettings | undefined {
  const files: RedisTlsSettings = {
    ...(env.TETHER_REDIS_TLS_CA && { caFile: env.TETHER_REDIS_TLS_CA }),
    ...(env.TETHER_REDIS_TLS_CERT && { certFile: env.TETHER_REDIS_TLS_CERT }),
    ...(env.TETHER_REDIS_TLS_KEY && { keyFile: env.TETHER_REDIS_TLS_KEY }),
  };
  const anyFile = Object.keys(files).length > 0;
  if (anyFile && !urlTls && env.TETHER_REDIS_URL !== undefined) {
    const variable = env.TETHER_REDIS_TLS_CA ? 'TETHER_REDIS_TLS_CA' : 'TETHER_REDIS_TLS_CERT';
    throw new RedisConfigProblem(
      variable,
      'is set but TETHER_REDIS_URL is not a TLS URL (rediss://, rediss-cluster:// or rediss-sentinel://)',
    );
  }
  return urlTls || anyFile ? files : undefined;
}

/** Everything `redisSettings` can refuse, thrown as a problem naming its variable. */
function settingsOrProblem(env: RedisEnv): RedisSettings {
  const parsed = sourceOf(env);
  const auth = authOf(env, parsed);
  if (env.TETHER_REDIS_SENTINEL_PASSWORD_FILE !== undefined && parsed.kind !== 'sentinel') {
    throw new RedisConfigProblem(
      'TETHER_REDIS_SENTINEL_PASSWORD_FILE',
      'is set but TETHER_REDIS_URL is not a redis-sentinel:// URL',
    );
  }
  const unknown = [...parsed.query.keys()].find((key) => key !== 'name');
  if (unknown !== undefined || (parsed.kind !== 'sentinel' && parsed.query.has('name'))) {
    throw new RedisConfigProblem(
      'TETHER_REDIS_URL',
      `has an unknown query parameter "${unknown ?? 'name'}" (only redis-sentinel:// takes ?name=)`,
    );
  }
  return topologyOf(env, parsed, auth);
}

/** Where the nodes come from: the node list or the URL, never both. */
function sourceOf(env: RedisEnv): ParsedUrl {
  if ((env.TETHER_REDIS_TLS_CERT === undefined) !== (env.TETHER_REDIS_TLS_KEY === undefined)) {
    throw new RedisConfigProblem(
      env.TETHER_REDIS_TLS_CERT === undefined ? 'TETHER_REDIS_TLS_CERT' : 'TETHER_REDIS_TLS_KEY',
      'TETHER_REDIS_TLS_CERT and TETHER_REDIS_TLS_KEY are set together or not at all',
    );
  }
  if (env.TETHER_REDIS_URL !== undefined && env.TETHER_REDIS_CLUSTER_NODES !== undefined) {
    throw new RedisConfigProblem(
      'TETHER_REDIS_CLUSTER_NODES',
      'is set together with TETHER_REDIS_URL: set one (a redis-cluster:// URL or the node list)',
    );
  }
  if (env.TETHER_REDIS_CLUSTER_NODES === undefined) {
    return parseUrl(env.TETHER_REDIS_URL ?? DEFAULT_REDIS_URL);
  }
  return {
    kind: 'cluster',
    tls: false,
    hosts: parseHosts(env.TETHER_REDIS_CLUSTER_NODES, DEFAULT_PORT.redis, 'TETHER_REDIS_CLUSTER_NODES'),
    query: new URLSearchParams(),
  };
}

/** The credentials and TLS files, each given once: in the URL or in its own variable. */
function authOf(env: RedisEnv, parsed: ParsedUrl): RedisAuth {
  if (parsed.password !== undefined && env.TETHER_REDIS_PASSWORD_FILE !== undefined) {
    throw new RedisConfigProblem(
      'TETHER_REDIS_PASSWORD_FILE',
      'is set but TETHER_REDIS_URL carries a password too: keep one of them',
    );
  }
  if (parsed.username !== undefined && env.TETHER_REDIS_USERNAME !== undefined) {
    throw new RedisConfigProblem(
      'TETHER_REDIS_USERNAME',
      'is set but TETHER_REDIS_URL names a user too: keep one of them',
    );
  }
  const username = env.TETHER_REDIS_USERNAME ?? parsed.username;
  const password =
    parsed.password ?? readSecret('TETHER_REDIS_PASSWORD_FILE', env.TETHER_REDIS_PASSWORD_FILE);
  const tls = tlsOf(env, parsed.tls);
  return {
    ...(username && { username }),
    ...(password && { password }),
    ...(tls && { tls }),
  };
}

function topologyOf(env: RedisEnv, parsed: ParsedUrl, auth: RedisAuth): RedisSettings {
  switch (parsed.kind) {
    case 'redis':
      return { mode: 'standalone', node: parsed.hosts[0]!, db: parsed.db ?? 0, ...auth };
    case 'cluster':
      if (parsed.db !== undefined && parsed.db !== 0) {
        throw new RedisConfigProblem(
          'TETHER_REDIS_URL',
          'names a database: Redis Cluster only has database 0',
        );
      }
      return { mode: 'cluster', nodes: parsed.hosts, ...auth };
    case 'sentinel': {
      const name = parsed.query.get('name');
      if (!name) {
        throw new RedisConfigProblem(
          'TETHER_REDIS_URL',
          'is a redis-sentinel:// URL without ?name=<master group>',
        );
      }
      const sentinelPassword = readSecret(
        'TETHER_REDIS_SENTINEL_PASSWORD_FILE',
        env.TETHER_REDIS_SENTINEL_PASSWORD_FILE,
      );
      return {
        mode: 'sentinel',
        sentinels: parsed.hosts,
        name,
        db: parsed.db ?? 0,
        ...auth,
        ...(sentinelPassword && { sentinelPassword }),
      };
    }
  }
}

/** Refuses a combination that cannot connect, naming the variable (superRefine of config.ts). */
export function checkRedisEnv(env: RedisEnv, ctx: z.RefinementCtx): void {
  try {
    settingsOrProblem(env);
  } catch (error) {
    if (!(error instanceof RedisConfigProblem)) throw error;
    ctx.addIssue({ code: 'custom', path: [error.variable], message: error.message });
  }
}

/** The settings of an env `checkRedisEnv` accepted. */
export function redisSettings(env: RedisEnv): RedisSettings {
  return settingsOrProblem(env);
}

/** Where the router connects, for a log line: hosts and mode, never the user's password. */
export function describeRedis(settings: RedisSettings): string {
  const hosts = (list: RedisAddress[]) => list.map((node) => `${node.host}:${node.port}`).join(',');
  const tls = settings.tls ? ' over TLS' : '';
  const user = settings.username ? ` as ${settings.username}` : '';
  switch (settings.mode) {
    case 'standalone':
      return `Redis ${hosts([settings.node])}${tls}${user}`;
    case 'cluster':
      return `Redis Cluster seeded by ${hosts(settings.nodes)}${tls}${user}`;
    case 'sentinel':
      return `Redis master "${settings.name}" via sentinels ${hosts(settings.sentinels)}${tls}${user}`;
  }
}
