// Example: follow every session's lifecycle events (docs/events.md) with a durable pull consumer.
// Prints one line per event and acks it after printing; stop it (Ctrl-C) and start it again with
// the same durable name and it resumes where it stopped, seeing each event once. Events of types
// it does not know, and fields it does not know, are skipped, not failed (lifecycle-consumer.ts).
//
//   npm run build && npm run example:subscriber
//   TETHER_SUBSCRIBER_DURABLE=my-service npm run example:subscriber   (or --durable my-service)
import { z } from 'zod';
import { Subjects, type LifecycleEvent } from '#contracts';
import { loadConfig, natsUrlVar } from '#config';
import { connectNats } from '#messaging';
import { attachLifecycleConsumer, consumeLifecycle } from './lifecycle-consumer.js';

const schema = z.object({
  TETHER_NATS_URL: natsUrlVar(),
  TETHER_NAMESPACE: z.string().default('tether'),
  TETHER_SUBSCRIBER_DURABLE: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 characters of [A-Za-z0-9_-]')
    .default('lifecycle-example'),
});

/** `--durable <name>` overrides the environment. */
function durableFlag(argv: string[]): string | undefined {
  const index = argv.indexOf('--durable');
  return index >= 0 ? argv[index + 1] : undefined;
}

function print(event: LifecycleEvent): Promise<void> {
  const detail = event.data.approval_id ?? event.data.status ?? '';
  console.log(
    `${new Date(event.at).toISOString()} ${event.session_id} ${event.epoch}#${event.sequence} ${event.type} ${detail}`.trimEnd(),
  );
  return Promise.resolve();
}

async function main(): Promise<void> {
  const flag = durableFlag(process.argv.slice(2));
  const config = loadConfig(schema, {
    ...process.env,
    ...(flag !== undefined ? { TETHER_SUBSCRIBER_DURABLE: flag } : {}),
  });
  const subjects = new Subjects(config.TETHER_NAMESPACE);
  const durable = config.TETHER_SUBSCRIBER_DURABLE;
  const nc = await connectNats({ servers: config.TETHER_NATS_URL, name: 'lifecycle-subscriber' });
  const consumer = await attachLifecycleConsumer(nc, {
    stream: subjects.sessionsStream,
    durable,
    filterSubject: subjects.lifecycleWildcard,
    ackWaitMs: 30_000,
    // One event at a time here; a service handling events concurrently raises it.
    maxAckPending: 100,
  });
  console.log(`Following ${subjects.lifecycleWildcard} as durable consumer ${durable}.`);

  let stopping = false;
  const stop = (): void => {
    stopping = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await consumeLifecycle(consumer, print, { stopped: () => stopping, log: (line) => console.log(line) });
  await nc.drain();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
