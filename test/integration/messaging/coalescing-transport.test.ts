// The services' NATS transport (libs/messaging/src/coalescing-transport.ts) against the real
// server: what one event-loop turn publishes leaves in one socket write, in order, and closing
// or draining right after a publish still delivers it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '#messaging';
import { freePort, testServices, uniqueNamespace } from '#test-support';
import { PrivateNats } from '../../support/private-servers.js';
import { CoalescingTransport } from '../../../libs/messaging/src/coalescing-transport.js';

jest.setTimeout(30_000);

const encoder = new TextEncoder();
const decoder = new TextDecoder();

let url: string;
let reader: NatsConnection;
let subject: string;

beforeAll(async () => {
  url = (await testServices()).natsUrl;
  reader = await connectNats({ servers: url, name: 'coalescing-reader' });
});

beforeEach(() => {
  subject = `${uniqueNamespace('coalesce')}.frames`;
});

afterAll(async () => {
  await reader?.close();
});

/** Collects `count` messages of the subject, read by `from`, in arrival order. */
async function collect(
  count: number,
  publish: () => Promise<void>,
  from: NatsConnection = reader,
): Promise<string[]> {
  const received: string[] = [];
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const subscription = from.subscribe(subject, {
    callback: (_error, msg: Msg) => {
      received.push(decoder.decode(msg.data));
      if (received.length === count) done();
    },
  });
  await from.flush();
  await publish();
  await all;
  subscription.unsubscribe();
  return received;
}

/** The connection's transport (client internals: the write count is what this suite is about). */
function transportOf(nc: NatsConnection): CoalescingTransport {
  return (nc as unknown as { protocol: { transport: CoalescingTransport } }).protocol.transport;
}

/** Counts the socket writes of a connection: one per `_write`, one per `_writev`. */
function countWrites(nc: NatsConnection): number[] {
  const socket = transportOf(nc).socket;
  const writes: number[] = [];
  const writev = socket._writev!.bind(socket);
  const write = socket._write.bind(socket);
  socket._writev = (chunks, callback) => {
    writes.push(chunks.length);
    writev(chunks, callback);
  };
  socket._write = (chunk, encoding, callback) => {
    writes.push(1);
    write(chunk, encoding, callback);
  };
  return writes;
}

/** 500 publishes spread over several microtasks of one turn, as handlers answering requests do. */
async function publishInOneTurn(writer: NatsConnection, to: string): Promise<void> {
  for (let n = 0; n < 500; n++) {
    if (n % 100 === 0) await Promise.resolve();
    writer.publish(to, encoder.encode(String(n)));
  }
}

test('writes what one turn publishes in one socket write, in order', async () => {
  const writer = await connectNats({ servers: url, name: 'coalescing-writer' });
  try {
    expect(transportOf(writer)).toBeInstanceOf(CoalescingTransport);
    const writes = countWrites(writer);
    const received = await collect(500, () => publishInOneTurn(writer, subject));

    expect(received).toEqual(Array.from({ length: 500 }, (_, n) => String(n)));
    // The client buffers each microtask's publishes into one frame; all of them left in one write.
    expect(writes).toEqual([expect.any(Number)]);
    expect(writes[0]).toBeGreaterThan(1);
  } finally {
    await writer.close();
  }
});

test('coalesces over TLS too', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tether-nats-tls-'));
  const tls = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      // The client checks the name `localhost` for a loopback address.
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      tls.key,
      '-out',
      tls.cert,
    ],
    { stdio: 'ignore' },
  );
  const server = new PrivateNats(await freePort(), tls);
  try {
    await server.start();
    const options = { servers: server.url, tls: { caFile: tls.cert } };
    const tlsReader = await connectNats({ ...options, name: 'coalescing-tls-reader' });
    const writer = await connectNats({ ...options, name: 'coalescing-tls-writer' });
    try {
      expect(transportOf(writer).isEncrypted()).toBe(true);
      const writes = countWrites(writer);
      const received = await collect(500, () => publishInOneTurn(writer, subject), tlsReader);

      expect(received).toEqual(Array.from({ length: 500 }, (_, n) => String(n)));
      expect(writes).toEqual([expect.any(Number)]);
    } finally {
      await writer.close();
      await tlsReader.close();
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('writes what it holds before the connection closes', async () => {
  const writer = await connectNats({ servers: url, name: 'coalescing-close' });
  const received = await collect(1, async () => {
    writer.publish(subject, encoder.encode('last words'));
    // The client hands its buffer to the transport at the next microtask; the transport holds it
    // until the end of the turn, and the close comes first. (A publish the client still buffers
    // when `close()` is called is dropped by the client itself, with or without this transport:
    // `drain()` is the graceful close, tested below.)
    await Promise.resolve();
    await writer.close();
  });
  expect(received).toEqual(['last words']);
});

test('delivers publishes made just before a drain', async () => {
  const writer = await connectNats({ servers: url, name: 'coalescing-drain' });
  const received = await collect(3, async () => {
    for (const text of ['one', 'two', 'three']) writer.publish(subject, encoder.encode(text));
    await writer.drain();
  });
  expect(received).toEqual(['one', 'two', 'three']);
});
