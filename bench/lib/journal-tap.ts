// A passive NATS listener, in a process of its own, that times the hops of the SSE path without
// touching the services: when the router appended a session's journal row (the JetStream publish
// passes the server as a plain message), when history published its commit notice, and when the
// api asked history for an `after` page and got the answer (the request and its `_INBOX` reply).
// Times are wall-clock ms (sub-ms), comparable with the emit and SSE receipt times.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { sealedJournalEntrySchema, Subjects } from '#contracts';
import { JournalCipher } from '#messaging';
import { DEV_JOURNAL_KEY } from '../../scripts/stack/launcher.js';
import { wallClock } from './sse.js';

export interface TapSpec {
  natsUrl: string;
  namespace: string;
}

/** One `history.journal-page` round trip the api made. */
export interface PageRead {
  session: string;
  /** The request's cursor sequence (-1 without a cursor). */
  after: number;
  start: number;
  end: number;
}

/** A journal row the router appended. */
export interface Append {
  sequence: number;
  /** When the append passed NATS. */
  at: number;
}

export interface TapResult {
  /** `<session>:<emit ms>` (the fake edge's emit time in the row's last message) → its append. */
  appends: Record<string, Append>;
  /** `<session>:<head>` → when history's commit notice passed NATS. */
  notices: Record<string, number>;
  pages: PageRead[];
}

async function listen(spec: TapSpec): Promise<void> {
  const subjects = new Subjects(spec.namespace);
  const nc = await connect({
    servers: spec.natsUrl.split(','),
    name: 'bench-journal-tap',
    noAsyncTraces: true,
  });
  const result: TapResult = { appends: {}, notices: {}, pages: [] };
  const pending = new Map<string, { session: string; after: number; start: number }>();
  // The bench stack seals rows with the dev journal key; the tap opens them like history does.
  const cipher = new JournalCipher(DEV_JOURNAL_KEY);
  nc.subscribe(subjects.journalWildcard, {
    callback: (error, msg) => {
      if (error) return;
      const at = wallClock();
      try {
        const sealed = sealedJournalEntrySchema.safeParse(msg.json());
        if (!sealed.success) return;
        const entry = cipher.open(sealed.data) as {
          session_id: string;
          sequence?: number;
          snapshot?: { messages?: { text?: string }[] };
        };
        const emitted = /@(\d+)$/.exec(entry.snapshot?.messages?.at(-1)?.text ?? '')?.[1];
        if (entry.session_id && typeof entry.sequence === 'number' && emitted) {
          result.appends[`${entry.session_id}:${emitted}`] = { sequence: entry.sequence, at };
        }
      } catch {
        // Not a journal entry this tap understands.
      }
    },
  });
  nc.subscribe(`${spec.namespace}.session.*.committed`, {
    callback: (error, msg) => {
      if (error) return;
      const at = wallClock();
      try {
        const notice = msg.json<{ session_id?: string; head?: number }>();
        const key = `${notice.session_id}:${notice.head}`;
        // The first notice of a head counts (a redelivered row may notify again).
        if (notice.session_id && result.notices[key] === undefined) result.notices[key] = at;
      } catch {
        // ignore
      }
    },
  });
  nc.subscribe(subjects.requests.historyJournalPage, {
    callback: (error, msg) => {
      if (error || !msg.reply) return;
      const start = wallClock();
      try {
        const request = msg.json<{ session_id?: string; cursor?: { sequence?: number } }>();
        pending.set(msg.reply, {
          session: request.session_id ?? '',
          after: request.cursor?.sequence ?? -1,
          start,
        });
      } catch {
        // ignore
      }
    },
  });
  nc.subscribe('_INBOX.>', {
    callback: (error, msg) => {
      if (error) return;
      const request = pending.get(msg.subject);
      if (!request) return;
      pending.delete(msg.subject);
      result.pages.push({ ...request, end: wallClock() });
    },
  });
  await nc.flush();
  process.send!({ type: 'ready' });
  await new Promise((resolve) => process.once('message', resolve));
  await nc.close();
  await new Promise<void>((resolve) => process.send!(result, () => resolve()));
}

export class JournalTap {
  private constructor(private readonly child: ChildProcess) {}

  static async start(spec: TapSpec): Promise<JournalTap> {
    const child = fork(fileURLToPath(import.meta.url), ['--tap-child'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`The journal tap exited with code ${code}.`)));
      child.send(spec);
    });
    return new JournalTap(child);
  }

  async stop(): Promise<TapResult> {
    const result = new Promise<TapResult>((resolve, reject) => {
      this.child.once('message', (message) => resolve(message as TapResult));
      this.child.once('exit', (code) => reject(new Error(`The journal tap exited with code ${code}.`)));
    });
    this.child.send({ type: 'stop' });
    return result;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
  }
}

if (process.argv[2] === '--tap-child' && process.send) {
  process.once('message', (spec: TapSpec) => {
    void listen(spec).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}
