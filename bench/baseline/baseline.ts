// The least any NATS-based design pays for one relayed request: a bare node:http server that
// makes one NATS request to a bare responder, which answers with a fixed payload (the real poll
// reply captured from the chain, so both move the same bytes). Both use the raw NATS client with
// `noAsyncTraces` and a callback subscription, as our own loopback measurements recommend.
// Run as two processes: `baseline.js responder <nats> <subject> <payloadFile>` and
// `baseline.js http <nats> <subject> <port>`; each says `ready` over IPC.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect } from '@nats-io/transport-node';

/** The front's request timeout; far above any latency a run should see. */
const REQUEST_TIMEOUT_MS = 10_000;

const [role, natsUrl, subject, last] = process.argv.slice(2);
if (!natsUrl || !subject || !last || (role !== 'responder' && role !== 'http')) {
  console.error('usage: baseline.js responder|http <natsUrl> <subject> <payloadFile|port>');
  process.exit(2);
}
const nc = await connect({
  servers: natsUrl.split(','),
  name: `bench-baseline-${role}`,
  noAsyncTraces: true,
});

if (role === 'responder') {
  const payload = readFileSync(last);
  nc.subscribe(subject, {
    queue: 'bench-baseline',
    callback: (_error, msg) => {
      msg.respond(payload);
    },
  });
  await nc.flush();
} else {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      nc.request(subject, Buffer.concat(chunks), { timeout: REQUEST_TIMEOUT_MS }).then(
        (reply) => {
          res.writeHead(200, {
            'content-type': 'application/json; charset=utf-8',
            'content-length': reply.data.length,
          });
          res.end(reply.data);
        },
        () => {
          res.writeHead(503);
          res.end();
        },
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(Number(last), '127.0.0.1', resolve));
}
process.send?.('ready');
const stop = () => void nc.drain().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
