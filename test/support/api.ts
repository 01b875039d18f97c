// Boots the api in-process against real NATS, with raw NATS responders standing in for the
// router and history. The stand-ins record every payload they receive so tests can assert what
// the api sent (and that it sent nothing).
import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, expect } from '@jest/globals';
import { SignJWT } from 'jose';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Subjects, type AgentAccess, type RequestName } from '#contracts';
import { decodeJson, encodeJson } from '#messaging';
import { testServices, uniqueNamespace, TEST_JWT_SECRET } from '#test-support';
import { createApiApp } from '../../apps/api/src/app.js';
import type { ApiConfig, JwtKeySource } from '../../apps/api/src/config.js';

export const ALL_PERMISSIONS = ['ai.access.use', 'connectors:update', 'files.read', 'files.upload'];

export const ALICE = 'alice';
export const BOB = 'bob';
/** Alice's connector and her saved access on it. */
export const EDGE = '1001';
export const ACCESS: AgentAccess = {
  id: 'a'.repeat(32),
  name: 'Main project',
  kind: 'codex',
  edge_id: EDGE,
  installation_id: 'i'.repeat(32),
  project: '/home/alice/project',
};
/** Bob's connector and access: foreign to Alice. */
export const BOB_EDGE = '2002';
export const BOB_ACCESS: AgentAccess = {
  ...ACCESS,
  id: 'b'.repeat(32),
  edge_id: BOB_EDGE,
  project: '/home/bob',
};
export const SESSION = 's'.repeat(32);

const GENEROUS_LIMITS: NonNullable<ApiConfig['limits']> = {
  userRate: { perSecond: 100_000, burst: 100_000 },
  edgeRate: { perSecond: 100_000, burst: 100_000 },
  userStreams: 100_000,
  edgeStreams: 100_000,
  userWatches: 100_000,
  edgeWatches: 100_000,
};

export async function token(
  sub: string | undefined,
  options: { permissions?: unknown; expiresIn?: number; secret?: string } = {},
): Promise<string> {
  const jwt = new SignJWT({ permissions: options.permissions ?? ALL_PERMISSIONS })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + (options.expiresIn ?? 300));
  if (sub !== undefined) jwt.setSubject(sub);
  return jwt.sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
}

type Handler = (payload: Record<string, unknown>) => unknown;

function rpcError(code: string) {
  return { error: { code, message: code } };
}

/** Ownership as history would answer it: Alice owns EDGE and ACCESS, Bob owns the others. */
function authorizeLikeHistory(payload: Record<string, unknown>): unknown {
  const owned =
    payload['actor_id'] === ALICE ? { edge: EDGE, access: ACCESS } : { edge: BOB_EDGE, access: BOB_ACCESS };
  if (payload['edge_id'] !== owned.edge) return rpcError('connector_not_found');
  if (payload['access_id'] === undefined) return { ok: true };
  if (payload['access_id'] !== owned.access.id) return rpcError('access_not_found');
  return { ok: true, access: owned.access };
}

export const DEFAULT_HANDLERS: Partial<Record<RequestName, Handler>> = {
  historyAuthorize: authorizeLikeHistory,
  routerEdgeAgent: () => ({
    version: 1,
    status: 'ok',
    session_id: SESSION,
    revision: 3,
    messages: [{ role: 'assistant', text: 'hi' }],
  }),
  routerPresence: (payload) => ({ online: (payload['edge_ids'] as string[]).filter((id) => id === EDGE) }),
  historyConnectorList: () => ({
    connectors: [
      { id: EDGE, name: 'laptop', device: 'alice-mbp' },
      { id: '1002', name: 'server' },
    ],
  }),
  historyConnectorEnroll: (payload) => ({
    connector: {
      id: '1003',
      name: payload['name'],
      ...(payload['device'] ? { device: payload['device'] } : {}),
    },
    edge_token: 'edge-token-value',
  }),
  historyConnectorRotate: (payload) =>
    payload['actor_id'] === ALICE && payload['edge_id'] === EDGE
      ? { connector: { id: EDGE, name: 'laptop' }, edge_token: '1.rotated-token', nats_creds: 'creds-text' }
      : rpcError('connector_not_found'),
  historyConnectorDelete: (payload) =>
    payload['actor_id'] === ALICE && payload['edge_id'] === EDGE
      ? { connector: { id: EDGE, name: 'laptop' } }
      : rpcError('connector_not_found'),
  historyAccessList: (payload) => ({
    items: [ACCESS],
    total: 1,
    page: payload['page'],
    page_size: payload['page_size'],
  }),
  historyAccessCreate: (payload) => ({ access: { id: 'c'.repeat(32), ...(payload['access'] as object) } }),
  historyAccessUpdate: (payload) =>
    payload['id'] === ACCESS.id
      ? { access: { ...(payload['access'] as object), id: payload['id'] } }
      : rpcError('access_not_found'),
  historyAccessDelete: (payload) =>
    payload['id'] === ACCESS.id ? { access: ACCESS } : rpcError('access_not_found'),
};

/** Raw NATS responders for the router and history subjects of one namespace. */
export class StandIns {
  readonly calls = new Map<RequestName, Record<string, unknown>[]>();
  readonly handlers: Partial<Record<RequestName, Handler>> = { ...DEFAULT_HANDLERS };
  private readonly subscriptions = new Map<RequestName, Subscription>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly subjects: Subjects,
  ) {}

  async serve(...names: RequestName[]): Promise<void> {
    for (const name of names) {
      const subscription = this.nc.subscribe(this.subjects.requests[name], {
        callback: (_error, msg) => {
          const payload = decodeJson<Record<string, unknown>>(msg.data);
          this.received(name).push(payload);
          const handler = this.handlers[name];
          void Promise.resolve(handler ? handler(payload) : rpcError('internal')).then((reply) =>
            msg.respond(encodeJson(reply)),
          );
        },
      });
      this.subscriptions.set(name, subscription);
    }
    await this.nc.flush();
  }

  /** Takes a stand-in away, as if that service were down. */
  async stop(name: RequestName): Promise<void> {
    this.subscriptions.get(name)?.unsubscribe();
    this.subscriptions.delete(name);
    await this.nc.flush();
  }

  received(name: RequestName): Record<string, unknown>[] {
    let list = this.calls.get(name);
    if (!list) this.calls.set(name, (list = []));
    return list;
  }

  /**
   * The router answers `reply`, and while it does the grant goes away: history refuses every
   * authorization after it with `code` (an access deleted, a connector taken away mid-call).
   */
  revokeDuring(reply: Record<string, unknown>, code: 'access_not_found' | 'connector_not_found'): void {
    this.handlers.routerEdgeAgent = () => {
      this.handlers.historyAuthorize = () => ({ error: { code, message: 'gone' } });
      return { version: 1, status: 'ok', ...reply };
    };
  }

  reset(): void {
    this.calls.clear();
    Object.assign(this.handlers, DEFAULT_HANDLERS);
  }

  close(): void {
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
    this.subscriptions.clear();
  }
}

export interface Harness {
  baseUrl: string;
  standIns: StandIns;
  subjects: Subjects;
  close(): Promise<void>;
}

/** The api listening on 127.0.0.1:<random>, its stand-ins serving every subject it uses. */
export async function startApi(
  label: string,
  key: JwtKeySource = { kind: 'secret', secret: TEST_JWT_SECRET },
  jwt: Partial<ApiConfig['jwt']> = {},
  overrides: Partial<Pick<ApiConfig, 'authorizeCacheMs' | 'authorizeOutageMs' | 'limits' | 'console'>> = {},
): Promise<Harness> {
  const { natsUrl } = await testServices();
  const namespace = uniqueNamespace(label);
  const subjects = new Subjects(namespace);
  // One connection for the api, one for the stand-ins, as in a deployment.
  const apiNc = await connect({ servers: natsUrl, name: `api-${label}` });
  const standInNc = await connect({ servers: natsUrl, name: `standins-${label}` });
  const config: ApiConfig = {
    nats: { servers: [natsUrl] },
    namespace,
    logLevel: 'error',
    http: { host: '127.0.0.1', port: 0 },
    jwt: { key, ...jwt },
    // Suites fire many calls as one user in a burst; the limits suite passes its own.
    limits: GENEROUS_LIMITS,
    ...overrides,
  };
  const standIns = new StandIns(standInNc, subjects);
  await standIns.serve(
    'historyAuthorize',
    'routerEdgeAgent',
    'routerPresence',
    'historyConnectorList',
    'historyConnectorEnroll',
    'historyConnectorRotate',
    'historyConnectorDelete',
    'historyAccessList',
    'historyAccessCreate',
    'historyAccessUpdate',
    'historyAccessDelete',
  );
  let app: NestFastifyApplication;
  try {
    app = await createApiApp({ config, nc: apiNc, subjects });
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    standIns.close();
    await Promise.allSettled([apiNc.close(), standInNc.close()]);
    throw error;
  }
  const address = app.getHttpServer().address();
  if (typeof address !== 'object' || address === null) throw new Error('Api did not bind a TCP port.');
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    standIns,
    subjects,
    async close() {
      await app.close();
      standIns.close();
      await Promise.allSettled([apiNc.drain(), standInNc.drain()]);
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** One HTTP call; `body` is sent as JSON unless it is already a string. */
export async function call(
  harness: Harness,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; contentType?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] = options.contentType ?? 'application/json';
  }
  const response = await fetch(`${harness.baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

/** An error answer: the status and the body the api's error filter writes for it. */
export function expectError(response: ApiResponse, code: number, message: string): void {
  expect(response.status).toBe(code);
  expect(response.body).toEqual({ code, message });
}

/** Publishes history's grants-changed notices to an api, as history does. */
export class GrantsNotices {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly subjects: Subjects,
  ) {}

  static async connect(api: Harness, label: string): Promise<GrantsNotices> {
    const nc = await connect({ servers: (await testServices()).natsUrl, name: `${label}-notifier` });
    return new GrantsNotices(nc, api.subjects);
  }

  /** A notice for `actorId`, flushed and given time to arrive. */
  async changed(actorId: string): Promise<void> {
    this.nc.publish(this.subjects.grantsChanged, encodeJson({ actor_id: actorId }));
    await this.nc.flush();
    // The api receives it on its own connection, which the test cannot flush: give delivery a
    // generous moment (a local core-NATS hop takes well under a millisecond).
    await new Promise((resolve) => setTimeout(resolve, 200));
  }

  close(): Promise<void> {
    return this.nc.drain();
  }
}

type ApiOverrides = Parameters<typeof startApi>[3];

/** What an api suite holds once its `beforeAll` ran. */
export interface ApiSuite {
  api: Harness;
  /** Tokens for ALICE and BOB with every permission. */
  alice: string;
  bob: string;
  /** Grants notices to the api (with `notices: true`). */
  notices: GrantsNotices;
}

/**
 * The api of the enclosing `describe`: started before its tests with `overrides`, stopped after
 * them, its stand-ins reset before each test. Read the fields inside tests and hooks only (they
 * are set when the suite starts).
 */
export function apiSuite(
  label: string,
  options: { overrides?: ApiOverrides; notices?: boolean } = {},
): ApiSuite {
  const suite = {} as ApiSuite;
  beforeAll(async () => {
    suite.api = await startApi(label, undefined, undefined, options.overrides);
    [suite.alice, suite.bob] = await Promise.all([token(ALICE), token(BOB)]);
    if (options.notices) suite.notices = await GrantsNotices.connect(suite.api, label);
  });
  afterAll(async () => {
    await suite.notices?.close();
    await suite.api?.close();
  });
  beforeEach(() => suite.api.standIns.reset());
  return suite;
}
