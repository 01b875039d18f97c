// Against a nats-server in operator mode started from the shipped configuration: what each
// identity's credentials allow, tried as an attacker would (issue 11). Every refusal is the
// server's: a permission violation, and no message reaching anyone.
import { jetstream, jetstreamManager, AckPolicy } from '@nats-io/jetstream';
import { jest } from '@jest/globals';
import { inboxPrefix, Subjects, type SessionUpdate } from '#contracts';
import {
  createUser,
  credsFile,
  keyFromSeed,
  mintEdgeUser,
  pushAccountJwt,
  tetherAccountJwt,
  userJwt,
} from '#nats-auth';
import { encodeJson } from '#messaging';
import { uniqueNamespace } from '../../support/environment.js';
import { startOperatorNats, type OperatorNats } from '../../support/nats-operator.js';
import { connectAs, within, type WatchedConnection } from '../../support/nats-permissions.js';

jest.setTimeout(60_000);

const PORT = 14201;
/** Long enough for a message to cross a loopback server many times over. */
const QUIET_MS = 500;
const subjects = new Subjects(uniqueNamespace('natsids'));
const EDGE_A = '101';
const EDGE_B = '102';

let nats: OperatorNats;
let router: WatchedConnection;
let api: WatchedConnection;
let history: WatchedConnection;
let subscriber: WatchedConnection;
let edgeA: WatchedConnection;
let edgeB: WatchedConnection;
/** A test-only user that may read everything: it sees whether a refused message went anywhere. */
let witness: WatchedConnection;
let anonymousRefused: string;
const edgeKeys: Record<string, string> = {};

async function edge(id: string): Promise<WatchedConnection> {
  const minted = await mintEdgeUser(
    subjects,
    id,
    nats.deployment.account,
    keyFromSeed(nats.deployment.seeds.accountSigning),
  );
  edgeKeys[id] = minted.publicKey;
  return connectAs(
    nats.url,
    nats.writeCreds(`edge-${id}`, minted.creds),
    inboxPrefix(subjects, 'edge', id),
    `edge-${id}`,
  );
}

beforeAll(async () => {
  nats = await startOperatorNats(subjects, PORT);
  const as = (identity: 'api' | 'session-router' | 'history' | 'subscriber') =>
    connectAs(nats.url, nats.credsPath(identity), inboxPrefix(subjects, identity), identity);
  [router, api, history, subscriber] = await Promise.all([
    as('session-router'),
    as('api'),
    as('history'),
    as('subscriber'),
  ]);
  [edgeA, edgeB] = await Promise.all([edge(EDGE_A), edge(EDGE_B)]);
  const witnessKey = createUser();
  const witnessJwt = await userJwt({
    name: 'witness',
    user: witnessKey.getPublicKey(),
    account: nats.deployment.account,
    signer: keyFromSeed(nats.deployment.seeds.accountSigning),
    claims: { sub: { allow: ['>'] }, pub: { deny: ['>'] } },
  });
  witness = await connectAs(
    nats.url,
    nats.writeCreds('witness', credsFile(witnessJwt, witnessKey)),
    '_INBOX',
    'witness',
  );
  const jsm = await jetstreamManager(router.nc);
  await jsm.streams.add({
    name: subjects.sessionsStream,
    subjects: [subjects.journalWildcard, subjects.lifecycleWildcard],
  });
  anonymousRefused = await router.nc
    .request('nope', new Uint8Array(), { timeout: 1 })
    .then(() => 'answered')
    .catch(() => 'refused');
});

afterAll(async () => {
  await Promise.allSettled(
    [router, api, history, subscriber, edgeA, edgeB, witness].map((watched) => watched?.nc.close()),
  );
  await nats?.stop();
});

/** Messages a connection receives on `subject` while `act` runs and a moment after. */
async function received(
  watcher: WatchedConnection,
  subject: string,
  act: () => Promise<void>,
): Promise<string[]> {
  const seen: string[] = [];
  const sub = watcher.nc.subscribe(subject, { callback: (_e, msg) => void seen.push(msg.subject) });
  await watcher.nc.flush();
  await act();
  await new Promise((done) => setTimeout(done, QUIET_MS));
  sub.unsubscribe();
  expect(watcher.refusals).not.toContain(`subscription ${subject}`);
  return seen;
}

async function refusedPublish(who: WatchedConnection, subject: string, data = encodeJson({})): Promise<void> {
  who.nc.publish(subject, data);
  await who.nc.flush();
  expect(await within(5_000, () => who.refusals.includes(`publish ${subject}`))).toBe(true);
}

async function refusedSubscribe(who: WatchedConnection, subject: string): Promise<string[]> {
  const seen: string[] = [];
  who.nc.subscribe(subject, { callback: (error, msg) => void (!error && seen.push(msg.subject)) });
  await who.nc.flush();
  expect(await within(5_000, () => who.refusals.includes(`subscription ${subject}`))).toBe(true);
  return seen;
}

describe('without credentials', () => {
  it('cannot connect at all', async () => {
    await expect(connectAs(nats.url, undefined, '_INBOX', 'anonymous')).rejects.toThrow(/authorization/i);
    expect(anonymousRefused).toBe('refused');
  });
});

describe("edge A's credentials", () => {
  it("cannot subscribe to edge B's RPC subject, the session subjects or the whole namespace", async () => {
    for (const subject of [
      subjects.edgeRpc(EDGE_B),
      `${subjects.namespace}.session.>`,
      `${subjects.namespace}.>`,
      '>',
      subjects.requests.routerEdgeAgent,
      subjects.sessionUpdateWildcard,
      subjects.journalWildcard,
      '_INBOX.>',
      inboxPrefix(subjects, 'session-router') + '.>',
    ]) {
      await refusedSubscribe(edgeA, subject);
    }
    // And a prompt sent to B never reaches A: the router's RPC lands with B only.
    const seenByA: string[] = [];
    edgeA.nc.subscribe(subjects.edgeRpc(EDGE_B), {
      callback: (e, m) => void (!e && seenByA.push(m.subject)),
    });
    const seenByB = await received(edgeB, subjects.edgeRpc(EDGE_B), async () => {
      router.nc.publish(subjects.edgeRpc(EDGE_B), encodeJson({ request: { text: 'secret prompt' } }));
      await router.nc.flush();
    });
    expect(seenByB).toHaveLength(1);
    expect(seenByA).toHaveLength(0);
  });

  it("cannot publish B's heartbeat or session update, nor anything of a service", async () => {
    const update: Partial<SessionUpdate> = { edge_id: EDGE_B, session_id: 's1', revision: 1 };
    const seen = await received(witness, `${subjects.namespace}.>`, async () => {
      await refusedPublish(edgeA, subjects.edgeHeartbeatOf(EDGE_B));
      await refusedPublish(edgeA, subjects.sessionUpdateOf(EDGE_B), encodeJson(update));
      await refusedPublish(edgeA, subjects.requests.routerEdgeAgent);
      await refusedPublish(edgeA, subjects.requests.historyAccessDelete);
      await refusedPublish(edgeA, subjects.requests.historyConnectorEnroll);
      await refusedPublish(edgeA, subjects.sessionJournal('s1'));
      await refusedPublish(edgeA, subjects.sessionLifecycle('s1'));
      await refusedPublish(edgeA, subjects.edgeRpc(EDGE_B));
      // A made-up router replica that then falls silent would make the api resend its calls.
      await refusedPublish(edgeA, subjects.routerHeartbeat);
    });
    expect(seen).toEqual([]);
  });

  it('may publish its own heartbeat and update, which the router receives', async () => {
    const seen = await received(witness, `${subjects.namespace}.>`, async () => {
      edgeA.nc.publish(subjects.edgeHeartbeatOf(EDGE_A), encodeJson({}));
      edgeA.nc.publish(subjects.sessionUpdateOf(EDGE_A), encodeJson({}));
      await edgeA.nc.flush();
    });
    expect(seen).toEqual([subjects.edgeHeartbeatOf(EDGE_A), subjects.sessionUpdateOf(EDGE_A)]);
    expect(edgeA.refusals.filter((r) => r.includes(`.${EDGE_A}.`))).toEqual([]);
  });

  it("cannot answer B's RPCs, even knowing the reply subject", async () => {
    let replySubject = '';
    const sub = edgeB.nc.subscribe(subjects.edgeRpc(EDGE_B), {
      callback: (_e, msg) => {
        replySubject = msg.reply ?? '';
        // B answers late, so a forged answer would arrive first.
        setTimeout(() => msg.respond(encodeJson({ status: 'ok', from: 'B' })), 300);
      },
    });
    await edgeB.nc.flush();
    const reply = router.nc.request(subjects.edgeRpc(EDGE_B), encodeJson({}), { timeout: 5_000 });
    expect(await within(5_000, () => replySubject !== '')).toBe(true);
    await refusedPublish(edgeA, replySubject, encodeJson({ status: 'ok', from: 'A' }));
    expect((await reply).json()).toEqual({ status: 'ok', from: 'B' });
    sub.unsubscribe();
  });
});

describe('the services', () => {
  it('only the api may call the router and history; an edge or the subscriber with a forged actor reaches nothing', async () => {
    const forged = encodeJson({ actor_id: 'alice', request: { edge_id: EDGE_A, action: 'poll' } });
    const seen = await received(witness, subjects.requests.routerEdgeAgent, async () => {
      await refusedPublish(edgeA, subjects.requests.routerEdgeAgent, forged);
      await refusedPublish(subscriber, subjects.requests.routerEdgeAgent, forged);
      await refusedPublish(history, subjects.requests.routerEdgeAgent, forged);
      api.nc.publish(subjects.requests.routerEdgeAgent, forged);
      await api.nc.flush();
    });
    expect(seen).toEqual([subjects.requests.routerEdgeAgent]);
    for (const name of ['historyAccessDelete', 'historyConnectorEnroll', 'historyConnectorDelete'] as const) {
      await refusedPublish(router, subjects.requests[name]);
      await refusedPublish(edgeA, subjects.requests[name]);
    }
  });

  it('only the router publishes to edges, the journal and router heartbeats; only history answers history subjects', async () => {
    await refusedPublish(api, subjects.edgeRpc(EDGE_A));
    await refusedPublish(api, subjects.sessionJournal('s1'));
    await refusedPublish(history, subjects.sessionJournal('s1'));
    await refusedPublish(api, subjects.sessionLifecycle('s1'));
    await refusedPublish(api, subjects.routerHeartbeat);
    await refusedPublish(history, subjects.routerHeartbeat);
    await refusedPublish(subscriber, subjects.routerHeartbeat);
    const heard = await received(api, subjects.routerHeartbeat, async () => {
      router.nc.publish(subjects.routerHeartbeat, encodeJson({}));
      await router.nc.flush();
    });
    expect(heard).toEqual([subjects.routerHeartbeat]);
    await refusedSubscribe(api, subjects.requests.historyAccessDelete);
    await refusedSubscribe(router, subjects.requests.historyConnectorEnroll);
    await refusedSubscribe(api, subjects.sessionUpdateWildcard);
    await refusedSubscribe(history, subjects.edgeRpcWildcard);
  });
});

describe('the subscriber role', () => {
  it('receives lifecycle events, live and through its own durable consumer', async () => {
    const live = await received(subscriber, subjects.lifecycleWildcard, async () => {
      await jetstream(router.nc).publish(
        subjects.sessionLifecycle('s2'),
        encodeJson({ type: 'session.created' }),
      );
    });
    expect(live).toEqual([subjects.sessionLifecycle('s2')]);
    const jsm = await jetstreamManager(subscriber.nc);
    await jsm.consumers.add(subjects.sessionsStream, {
      durable_name: 'audit-service',
      filter_subject: subjects.lifecycleWildcard,
      ack_policy: AckPolicy.Explicit,
    });
    const consumer = await jetstream(subscriber.nc).consumers.get(subjects.sessionsStream, 'audit-service');
    const msg = await consumer.next({ expires: 5_000 });
    expect(msg?.subject).toBe(subjects.sessionLifecycle('s2'));
    expect(await msg?.ackAck()).toBe(true);
  });

  it('is refused the journal, a journal consumer, history’s durable and every publish', async () => {
    await refusedSubscribe(subscriber, subjects.journalWildcard);
    await refusedSubscribe(subscriber, `${subjects.namespace}.session.>`);
    await refusedSubscribe(subscriber, subjects.sessionJournalNotice('*'));
    await refusedSubscribe(subscriber, '_INBOX.>');
    const jsm = await jetstreamManager(subscriber.nc);
    await expect(
      jsm.consumers.add(subjects.sessionsStream, {
        durable_name: 'sneaky',
        filter_subject: subjects.journalWildcard,
        ack_policy: AckPolicy.Explicit,
        // A refused API call gets no answer: the request times out.
      }),
    ).rejects.toThrow();
    await refusedPublish(
      subscriber,
      `$JS.API.CONSUMER.MSG.NEXT.${subjects.sessionsStream}.${subjects.historyJournalConsumer}`,
    );
    await refusedPublish(subscriber, `$JS.API.STREAM.MSG.GET.${subjects.sessionsStream}`);
    await refusedPublish(subscriber, `$JS.API.STREAM.PURGE.${subjects.sessionsStream}`);
    await refusedPublish(subscriber, `$JS.API.STREAM.DELETE.${subjects.sessionsStream}`);
    // A forged `session.deleted` event, as a stored lifecycle message or a plain one.
    await refusedPublish(
      subscriber,
      subjects.sessionLifecycle('s2'),
      encodeJson({ type: 'session.deleted' }),
    );
    await refusedPublish(edgeA, subjects.sessionLifecycle('s2'), encodeJson({ type: 'session.deleted' }));
    await refusedPublish(api, subjects.sessionLifecycle('s2'), encodeJson({ type: 'session.deleted' }));
    for (const name of ['routerEdgeAgent', 'historyAccessDelete'] as const) {
      await refusedPublish(subscriber, subjects.requests[name]);
    }
  });
});

describe('revoking one edge', () => {
  it('disconnects it within seconds, refuses it again, and leaves other edges working', async () => {
    const jwt = await tetherAccountJwt({
      account: nats.deployment.account,
      signer: keyFromSeed(nats.deployment.seeds.operatorSigning),
      signingKeys: [keyFromSeed(nats.deployment.seeds.accountSigning).getPublicKey()],
      revocations: { [edgeKeys[EDGE_A]!]: Math.floor(Date.now() / 1000) },
    });
    const system = await connectAs(nats.url, nats.credsPath('system'), '_INBOX', 'system');
    try {
      await pushAccountJwt(system.nc, jwt);
    } finally {
      await system.nc.close();
    }
    const closed = edgeA.nc.closed();
    expect(await within(10_000, () => edgeA.nc.isClosed())).toBe(true);
    await closed;
    await expect(
      connectAs(
        nats.url,
        `${nats.dir}/creds/edge-${EDGE_A}.creds`,
        inboxPrefix(subjects, 'edge', EDGE_A),
        'again',
      ),
    ).rejects.toThrow(/authorization|revoked/i);
    const seen = await received(witness, subjects.edgeHeartbeatOf(EDGE_B), async () => {
      edgeB.nc.publish(subjects.edgeHeartbeatOf(EDGE_B), encodeJson({}));
      await edgeB.nc.flush();
    });
    expect(seen).toHaveLength(1);
  });
});
