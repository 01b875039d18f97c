// The services' own request mux (libs/messaging/src/request-mux.ts) against the real NATS: every
// caller gets its own reply, the failures map to the same reasons as the client's request, and a
// closed connection ends what waits on it instead of leaving it to its timeout.
import { jest } from '@jest/globals';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { connectNats, decodeJson, encodeJson, requestJson, RpcUnavailableError } from '#messaging';
import { testServices, uniqueNamespace } from '#test-support';
import { requestMuxOf } from '../../../libs/messaging/src/nats-connection.js';

jest.setTimeout(30_000);

const LONG_MS = 20_000;

let url: string;
let client: NatsConnection;
let responder: NatsConnection;
let subject: string;

beforeAll(async () => {
  url = (await testServices()).natsUrl;
  responder = await connectNats({ servers: url, name: 'mux-responder' });
});

beforeEach(async () => {
  subject = `${uniqueNamespace('mux')}.echo`;
  client = await connectNats({ servers: url, name: 'mux-client', inboxPrefix: '_INBOX.muxtest' });
});

afterEach(async () => {
  if (!client.isClosed()) await client.close();
});

afterAll(async () => {
  await responder?.close();
});

async function failure(request: Promise<unknown>): Promise<string> {
  const error = await request.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RpcUnavailableError);
  return (error as RpcUnavailableError).reason;
}

test('gives each of many concurrent callers its own reply, under the connection inbox', async () => {
  const replyTo: string[] = [];
  responder.subscribe(subject, {
    callback: (_error, msg) => {
      replyTo.push(msg.reply ?? '');
      const { n } = decodeJson<{ n: number }>(msg.data, subject);
      // Answer out of order so a mux that matched replies by arrival would mix them up.
      setTimeout(() => msg.respond(encodeJson({ n, square: n * n })), (n * 7) % 13);
    },
  });
  await responder.flush();

  const replies = await Promise.all(
    Array.from({ length: 200 }, (_, n) =>
      requestJson<{ n: number; square: number }>(client, subject, { n }, { timeoutMs: LONG_MS }),
    ),
  );

  expect(replies).toEqual(Array.from({ length: 200 }, (_, n) => ({ n, square: n * n })));
  expect(new Set(replyTo).size).toBe(200);
  expect(replyTo.every((reply) => reply.startsWith('_INBOX.muxtest.'))).toBe(true);
  expect(requestMuxOf(client)?.size).toBe(0);
});

test('reports a subject nobody serves as no_responders', async () => {
  expect(await failure(requestJson(client, `${subject}.nobody`, {}, { timeoutMs: LONG_MS }))).toBe(
    'no_responders',
  );
  expect(requestMuxOf(client)?.size).toBe(0);
});

test('times out a request that gets no answer and drops the answer that comes later', async () => {
  let held: (() => void) | undefined;
  responder.subscribe(subject, {
    callback: (_error, msg) => {
      const { n } = decodeJson<{ n: number }>(msg.data, subject);
      const answer = () => msg.respond(encodeJson({ n }));
      if (n === 1) held = answer;
      else answer();
    },
  });
  await responder.flush();

  expect(await failure(requestJson(client, subject, { n: 1 }, { timeoutMs: 200 }))).toBe('timeout');
  expect(requestMuxOf(client)?.size).toBe(0);

  // The stale answer leaves the responder before the next request arrives there, so it reaches
  // the inbox first: it must not be taken for the next request's reply.
  held!();
  expect(await requestJson(client, subject, { n: 2 }, { timeoutMs: LONG_MS })).toEqual({ n: 2 });
});

test('fails the requests that wait on a connection when it closes, and refuses new ones', async () => {
  const received: number[] = [];
  responder.subscribe(subject, {
    callback: () => {
      received.push(1);
    },
  });
  await responder.flush();

  const waiting = Promise.all([
    failure(requestJson(client, subject, {}, { timeoutMs: LONG_MS })),
    failure(requestJson(client, subject, {}, { timeoutMs: LONG_MS })),
  ]);
  await client.flush();
  await client.close();

  expect(await waiting).toEqual(['disconnected', 'disconnected']);
  expect(received).toHaveLength(2);
  expect(await failure(requestJson(client, subject, {}, { timeoutMs: LONG_MS }))).toBe('disconnected');
});

test('fails the requests in flight when the connection drains', async () => {
  responder.subscribe(subject, { callback: () => undefined });
  await responder.flush();

  const waiting = failure(requestJson(client, subject, {}, { timeoutMs: LONG_MS }));
  await client.flush();
  await client.drain();

  expect(await waiting).toBe('disconnected');
  expect(requestMuxOf(client)?.size).toBe(0);
});

test('leaves a connection it did not make to the client mux', async () => {
  expect(requestMuxOf(responder)).toBeDefined();
  const plain = await connect({ servers: url, name: 'mux-plain' });
  try {
    expect(requestMuxOf(plain)).toBeUndefined();
    responder.subscribe(`${subject}.plain`, {
      callback: (_error, msg) => {
        msg.respond(encodeJson(7));
      },
    });
    await responder.flush();
    expect(await requestJson(plain, `${subject}.plain`, {}, { timeoutMs: LONG_MS })).toBe(7);
  } finally {
    await plain.close();
  }
});
