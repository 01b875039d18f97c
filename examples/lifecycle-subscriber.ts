// Example: follow every session's lifecycle events (docs/events.md) with a durable pull consumer.
// Prints one line per event and acks it after printing; stop it (Ctrl-C) and start it again with
// the same durable name and it resumes where it stopped, seeing each event once.
//
//   npm run build && npm run example:subscriber
//   TETHER_SUBSCRIBER_DURABLE=my-service npm run example:subscriber   (or --durable my-service)
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { z } from 'zod';
import { Subjects, inboxPrefix, lifecycleEventSchema } from '#contracts';
import { checkNatsEnv, loadConfig, natsEnv, natsSettings } from '#config';
import { connectNats, decodeJson, ensureDurableConsumer } from '#messaging';

/** How long one pull waits for an event before it asks again (and notices a stop request). */
const PULL_EXPIRES_MS = 5_000;
/** How long JetStream waits for an ack before it redelivers (a crashed subscriber's events). */
const ACK_WAIT_NS = 30 * 1_000_000_000;

// With NATS in operator mode, TETHER_NATS_CREDS names the subscriber role's creds file
// (docs/security.md): lifecycle events only, through a durable of its own.
const schema = z
  .object({
    ...natsEnv,
    TETHER_NAMESPACE: z.string().default('tether'),
    TETHER_SUBSCRIBER_DURABLE: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 characters of [A-Za-z0-9_-]')
      .default('lifecycle-example'),
  })
  .superRefine(checkNatsEnv);

/** `--durable <name>` overrides the environment. */
function durableFlag(argv: string[]): string | undefined {
  const index = argv.indexOf('--durable');
  return index >= 0 ? argv[index + 1] : undefined;
}

async function main(): Promise<void> {
  const flag = durableFlag(process.argv.slice(2));
  const config = loadConfig(schema, {
    ...process.env,
    ...(flag !== undefined ? { TETHER_SUBSCRIBER_DURABLE: flag } : {}),
  });
  const subjects = new Subjects(config.TETHER_NAMESPACE);
  const durable = config.TETHER_SUBSCRIBER_DURABLE;
  const nc = await connectNats({
    ...natsSettings(config),
    name: 'lifecycle-subscriber',
    inboxPrefix: inboxPrefix(subjects, 'subscriber'),
  });
  // The services create the stream; a read-only subscriber may not manage it.
  const jsm = await jetstreamManager(nc);
  await ensureDurableConsumer(jsm, subjects.sessionsStream, durable, {
    filter_subject: subjects.lifecycleWildcard,
    ack_wait: ACK_WAIT_NS,
  });
  const consumer = await jetstream(nc).consumers.get(subjects.sessionsStream, durable);
  console.log(`Following ${subjects.lifecycleWildcard} as durable consumer ${durable}.`);

  let stopping = false;
  const stop = (): void => {
    stopping = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  while (!stopping) {
    const msg = await consumer.next({ expires: PULL_EXPIRES_MS });
    if (!msg) continue;
    const parsed = lifecycleEventSchema.safeParse(decodeJson(msg.data, msg.subject));
    if (!parsed.success) {
      // Not a v1 event (a newer version or garbage): skip it for good, never block the stream.
      console.log(`skip ${msg.subject} stream#${msg.seq}: not a v1 lifecycle event`);
      msg.term();
      continue;
    }
    const event = parsed.data;
    const detail = event.data.approval_id ?? event.data.status ?? '';
    console.log(
      `${new Date(event.at).toISOString()} ${event.session_id} ${event.epoch}#${event.sequence} ${event.type} ${detail}`.trimEnd(),
    );
    await msg.ackAck();
  }
  await nc.drain();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
