// SSE subscribers of session journals (`GET /api/v1/sessions/{id}/events`), in load-generator
// processes of their own so they never share an event loop with a server or with the run that
// emits the deltas. Each process holds one `node:http` connection per stream, opens its streams a
// few at a time (a stream's first page read goes to history), retries a 404 (history has not
// stored the session's first row yet) until a deadline, and, when measuring, times every `batch`
// event against the emit time the fake edge wrote into the assistant message (`… @<Date.now()>`).
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request, type ClientRequest, type IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { SseParser } from '../../test/support/sse-parser.js';
import type { BenchTether } from './tether.js';

export interface SseSpec {
  /** `http://host:port` of the api. */
  apiUrl: string;
  token: string;
  edgeId: string;
  accessId: string;
  sessions: string[];
  /** Streams being opened at once by this process. */
  openParallel: number;
  /** Give up (re)trying to open a stream after this many ms. */
  openTimeoutMs: number;
  /** Record per-batch timings (B2); otherwise only hold the streams open (B3). */
  measure: boolean;
}

/** One `batch` event that carried a new delta of a session. */
export interface BatchRecord {
  session: string;
  /** The batch cursor's sequence (the journal head the stream had read up to). */
  sequence: number;
  /** The fake edge's `Date.now()` at the emit of the newest delta the batch carries. */
  emitted: number;
  /** Wall-clock ms (sub-ms, comparable across processes) when the event's bytes arrived. */
  received: number;
  /** Deltas of this session the stream never showed on their own (folded into this batch). */
  folded: number;
}

export interface SseOpened {
  type: 'opened';
  opened: number;
  failed: number;
  /** Attempts answered 404 before the journal existed (retried). */
  retried404: number;
  statuses: Record<string, number>;
}

export interface SseResult {
  type: 'result';
  opened: number;
  /** Streams the server closed (or that failed) before the run stopped them. */
  closedEarly: number;
  /** For each of those: ms between its opening and its closing. */
  closedEarlyAfterMs: number[];
  events: Record<string, number>;
  batches: BatchRecord[];
  /** Sessions whose stream (open or closed) had not shown the last delta when the run stopped waiting. */
  undelivered: number;
  cpuSeconds: number;
}

type Command = { type: 'stop'; last?: Record<string, number>; drainMs?: number };

interface Stream {
  index: number;
  req?: ClientRequest;
  res?: IncomingMessage;
  parser: SseParser;
  /** When the chunk being parsed arrived (the receive time of the events it completes). */
  received: number;
  /** Newest emit time shown for the session, and the assistant item's revision then. */
  lastEmitted: number;
  lastItemRevision: number;
  closed: boolean;
  openedAt: number;
}

const EMIT_PATTERN = /@(\d+)$/;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between processes. */
export function wallClock(): number {
  return performance.timeOrigin + performance.now();
}

interface BatchEvent {
  batch?: {
    cursor?: { sequence?: number };
    items?: { revision?: number; body?: { type?: string; role?: string; text?: string } }[];
  };
}

async function subscribe(spec: SseSpec): Promise<void> {
  const send = (message: SseOpened | SseResult) =>
    new Promise<void>((resolve) => process.send!(message, () => resolve()));
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const base = new URL(spec.apiUrl);
  const streams: Stream[] = spec.sessions.map((_, index) => {
    const stream: Stream = {
      index,
      parser: new SseParser((event) => onEvent(stream, event.type, event.data, stream.received)),
      received: 0,
      lastEmitted: 0,
      lastItemRevision: 0,
      closed: false,
      openedAt: 0,
    };
    return stream;
  });
  const events: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  const batches: BatchRecord[] = [];
  let stopping = false;
  let closedEarly = 0;
  const closedEarlyAfterMs: number[] = [];
  let retried404 = 0;
  let waiter: (() => void) | undefined;

  const onEvent = (stream: Stream, type: string, data: string, received: number) => {
    events[type] = (events[type] ?? 0) + 1;
    if (type !== 'batch' && type !== 'snapshot' && type !== 'reset') return;
    const parsed = JSON.parse(data) as BatchEvent & {
      snapshot?: { items?: { revision?: number; body?: { role?: string; text?: string } }[] };
    };
    const items = parsed.batch?.items ?? parsed.snapshot?.items ?? [];
    for (const item of items) {
      if (item.body?.role !== 'assistant') continue;
      const emitted = Number(EMIT_PATTERN.exec(item.body.text ?? '')?.[1]);
      const revision = item.revision ?? 0;
      if (!Number.isFinite(emitted) || emitted <= stream.lastEmitted) continue;
      // The first state a stream shows (its snapshot) is where it starts, not a delivery.
      if (type === 'batch' && spec.measure && stream.lastItemRevision > 0) {
        batches.push({
          session: spec.sessions[stream.index]!,
          sequence: parsed.batch?.cursor?.sequence ?? -1,
          emitted,
          received,
          folded: Math.max(0, revision - stream.lastItemRevision - 1),
        });
      }
      stream.lastEmitted = emitted;
      stream.lastItemRevision = revision;
    }
    waiter?.();
  };

  const parse = (stream: Stream, chunk: string, received: number) => {
    stream.received = received;
    stream.parser.push(chunk);
  };

  /** Resolves true once the stream answered 200, false when it could not be opened in time. */
  const open = async (stream: Stream, deadline: number): Promise<boolean> => {
    const session = spec.sessions[stream.index]!;
    const url = new URL(
      `/api/v1/sessions/${session}/events?edge_id=${spec.edgeId}&access_id=${spec.accessId}`,
      base,
    );
    for (let attempt = 0; ; attempt++) {
      const status = await new Promise<number>((resolve) => {
        const req = request(
          url,
          {
            agent,
            headers: { authorization: `Bearer ${spec.token}`, accept: 'text/event-stream' },
          },
          (res) => {
            const code = res.statusCode ?? 0;
            if (code !== 200) {
              res.resume();
              resolve(code);
              return;
            }
            stream.req = req;
            stream.res = res;
            stream.openedAt = Date.now();
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => parse(stream, chunk, wallClock()));
            const gone = () => {
              if (stream.closed) return;
              stream.closed = true;
              if (!stopping) {
                closedEarly++;
                closedEarlyAfterMs.push(Date.now() - stream.openedAt);
              }
              waiter?.();
            };
            res.on('end', gone);
            res.on('close', gone);
            res.on('error', gone);
            resolve(200);
          },
        );
        req.on('error', () => resolve(0));
        req.end();
      });
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status === 200) return true;
      if (status === 404) retried404++;
      if (Date.now() > deadline) return false;
      await new Promise((resume) => setTimeout(resume, Math.min(1_000, 100 * 2 ** Math.min(attempt, 4))));
    }
  };

  const deadline = Date.now() + spec.openTimeoutMs;
  let next = 0;
  let opened = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: Math.min(spec.openParallel, streams.length) }, async () => {
      while (next < streams.length) {
        const stream = streams[next++]!;
        if (await open(stream, deadline)) opened++;
        else {
          failed++;
          stream.closed = true;
        }
      }
    }),
  );
  const cpuAtOpen = process.cpuUsage();
  await send({ type: 'opened', opened, failed, retried404, statuses });

  const command = await new Promise<Command>((resolve) =>
    process.once('message', (message) => resolve(message as Command)),
  );
  // Wait (bounded) until every open stream showed the session's last delta.
  let undelivered = 0;
  if (command.last) {
    const last = command.last;
    const behind = (stream: Stream) => stream.lastEmitted < (last[spec.sessions[stream.index]!] ?? 0);
    // Only an open stream can still catch up; a closed one that is behind counts as undelivered.
    const pending = () => streams.filter((stream) => !stream.closed && behind(stream)).length;
    const until = Date.now() + (command.drainMs ?? 0);
    while (pending() > 0 && Date.now() < until) {
      await new Promise<void>((resolve) => {
        waiter = resolve;
        setTimeout(resolve, 250);
      });
      waiter = undefined;
    }
    undelivered = streams.filter(behind).length;
  }
  stopping = true;
  const cpu = process.cpuUsage(cpuAtOpen);
  for (const stream of streams) stream.req?.destroy();
  agent.destroy();
  await send({
    type: 'result',
    opened,
    closedEarly,
    closedEarlyAfterMs,
    events,
    batches,
    undelivered,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  });
}

/** One process of SSE subscribers, started and stopped by the run. */
export class SseClients {
  private constructor(
    private readonly child: ChildProcess,
    readonly opened: Promise<SseOpened>,
  ) {}

  /** Forks the process and starts opening its streams; `opened` resolves once it is done. */
  static start(spec: SseSpec): SseClients {
    const child = fork(fileURLToPath(import.meta.url), ['--sse-child'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const opened = new Promise<SseOpened>((resolve, reject) => {
      child.once('message', (message) => resolve(message as SseOpened));
      child.once('exit', (code) => reject(new Error(`SSE subscribers exited with code ${code}.`)));
    });
    child.send(spec);
    return new SseClients(child, opened);
  }

  /**
   * Stops the streams and returns the figures. With `last` (session id → the emit time of its
   * last acked delta) it first waits up to `drainMs` for every stream to show that delta.
   */
  async stop(last?: Record<string, number>, drainMs = 0): Promise<SseResult> {
    await this.opened.catch(() => undefined);
    const result = new Promise<SseResult>((resolve, reject) => {
      this.child.on('message', (message) => {
        if ((message as { type?: string }).type === 'result') resolve(message as SseResult);
      });
      this.child.once('exit', (code) => reject(new Error(`SSE subscribers exited with code ${code}.`)));
    });
    const command: Command = { type: 'stop', ...(last ? { last, drainMs } : {}) };
    this.child.send(command);
    const figures = await result;
    this.child.kill('SIGTERM');
    return figures;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
  }
}

/** How a run opens its streams: sessions per subscriber process, and SseSpec's own settings. */
export type SseSpread = Pick<SseSpec, 'openParallel' | 'openTimeoutMs' | 'measure'> & {
  perProcess: number;
  /** The api to stream from (default the tether's first). */
  apiUrl?: string;
};

/**
 * Starts a subscriber process per `spread.perProcess` of `sessions` (a session may repeat: one
 * stream each), each streaming as the tether's owner through its edge and `accessId`.
 */
export function startSseClients(
  tether: BenchTether,
  accessId: string,
  sessions: string[],
  spread: SseSpread,
): SseClients[] {
  const { perProcess, apiUrl, ...settings } = spread;
  return slices(sessions, Math.ceil(sessions.length / perProcess)).map((part) =>
    SseClients.start({
      apiUrl: apiUrl ?? tether.stack.apiUrl,
      token: tether.token,
      edgeId: tether.edge.id,
      accessId,
      sessions: part,
      ...settings,
    }),
  );
}

/** Waits until every process opened its streams: the counts summed, and each process's own. */
export async function allOpened(
  clients: SseClients[],
): Promise<Pick<SseOpened, 'opened' | 'failed' | 'retried404'> & { parts: SseOpened[] }> {
  const parts = await Promise.all(clients.map((client) => client.opened));
  const sum = (key: 'opened' | 'failed' | 'retried404') =>
    parts.reduce((total, part) => total + part[key], 0);
  return { opened: sum('opened'), failed: sum('failed'), retried404: sum('retried404'), parts };
}

/** Splits `items` into `parts` nearly equal consecutive slices (none empty). */
export function slices<T>(items: T[], parts: number): T[][] {
  const count = Math.max(1, Math.min(parts, items.length));
  const size = Math.ceil(items.length / count);
  return Array.from({ length: count }, (_, part) => items.slice(part * size, (part + 1) * size)).filter(
    (slice) => slice.length > 0,
  );
}

if (process.argv[2] === '--sse-child' && process.send) {
  process.once('message', (spec: SseSpec) => {
    void subscribe(spec).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}
