// Continuous client load for fault suites (issue 13): N clients share a few sessions, each in a
// closed loop of send + watch through one HTTP endpoint (a balancer), each following its
// session's SSE stream and resuming from its last event id. Every request's start, end and
// outcome is recorded, so a suite can say when requests succeeded again after a fault and what
// the latency was meanwhile. A send is resent with its operation id until answered, so a fault
// can delay it but never double it (docs/contract.md "Idempotent mutations").
import { randomBytes } from 'node:crypto';
import {
  operationFingerprint,
  type EdgeAgentRequest,
  type JournalItem,
  type JournalSnapshot,
} from '#contracts';

interface Snapshot {
  status: string;
  revision?: number;
  running?: boolean;
  operation?: {
    refusal?: { code: string };
    submission?: { dispatch_state?: string };
  };
}

export interface Sample {
  action: string;
  start: number;
  end: number;
  ok: boolean;
}

const RETRY_PAUSE_MS = 200;
const CALL_ATTEMPTS_MAX = 300;
const CLIENT_TIMEOUT_MS = 45_000;
const CONVERGE_TIMEOUT_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client's view of its session's journal, from the SSE events it applied. */
export class SseView {
  items = new Map<string, JournalItem>();
  lastEventId: string | undefined;
  reconnects = 0;

  apply(type: string, id: string | undefined, data: string): void {
    const event = JSON.parse(data) as {
      snapshot?: JournalSnapshot;
      batch?: { items: JournalItem[]; removedItemIds?: string[] };
    };
    if ((type === 'snapshot' || type === 'reset') && event.snapshot) {
      this.items = new Map(event.snapshot.items.map((item) => [item.itemId, item]));
    } else if (type === 'batch' && event.batch) {
      for (const item of event.batch.items) {
        const held = this.items.get(item.itemId);
        if (!held || held.revision <= item.revision) this.items.set(item.itemId, item);
      }
      for (const removed of event.batch.removedItemIds ?? []) this.items.delete(removed);
    }
    if (id !== undefined) this.lastEventId = id;
  }

  view(): JournalItem[] {
    return [...this.items.values()].sort(
      (a, b) => a.sequence - b.sequence || a.itemId.localeCompare(b.itemId),
    );
  }
}

export function userTexts(items: JournalItem[]): string[] {
  return items
    .filter((item) => item.body?.['type'] === 'message' && item.body['role'] === 'user')
    .map((item) => String(item.body?.['text']));
}

/** One session's lock: its clients take turns at send + watch (a session runs one turn at a time). */
class Turns {
  private tail: Promise<void> = Promise.resolve();
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

export interface LoadSession {
  id: string;
  revision: number;
  /** Texts of the sends answered ok: acknowledged, so they must be in the journal exactly once. */
  sent: string[];
  turns: Turns;
}

export interface FaultLoadOptions {
  url: string;
  token: string;
  edgeId: string;
  accessId: string;
  sessions: { id: string; revision: number }[];
  clients: number;
}

export class FaultLoad {
  readonly samples: Sample[] = [];
  /** Answers a fault explains (a killed backend, no router yet): resent with the same id. */
  readonly retried = new Map<string, number>();
  /** Answers no fault explains: must stay empty. */
  readonly failures: string[] = [];
  readonly sessions: LoadSession[];
  readonly views: SseView[] = [];
  answered = 0;
  private readonly stopSending = new AbortController();
  private readonly stopStreaming = new AbortController();
  private clients: Promise<void>[] = [];
  private streams: Promise<void>[] = [];

  constructor(private readonly options: FaultLoadOptions) {
    this.sessions = options.sessions.map((session) => ({ ...session, sent: [], turns: new Turns() }));
  }

  private noteRetry(why: string): void {
    this.retried.set(why, (this.retried.get(why) ?? 0) + 1);
  }

  private get query(): string {
    return `edge_id=${this.options.edgeId}&access_id=${this.options.accessId}`;
  }

  private async post(request: Record<string, unknown>): Promise<{ status: number; data?: Snapshot }> {
    const response = await fetch(`${this.options.url}/api/v1/edge-agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.options.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const text = await response.text();
    try {
      return { status: response.status, data: (JSON.parse(text) as { data?: Snapshot }).data };
    } catch {
      return { status: response.status };
    }
  }

  /**
   * One request until it is answered ok. Retryable, and resent as it was: a dropped connection or
   * 502/503 (a killed api), `unavailable` without an operation (no router answered), a copy still
   * running, an `unknown` dispatch (resent with `retry_unknown`). Anything else is a failure.
   */
  async call(request: Record<string, unknown>): Promise<Snapshot> {
    let current = request;
    const action = String(request.action);
    const began = Date.now();
    for (let attempt = 0; attempt < CALL_ATTEMPTS_MAX; attempt += 1) {
      const start = Date.now();
      let reply: { status: number; data?: Snapshot };
      try {
        reply = await this.post(current);
      } catch {
        this.samples.push({ action, start, end: Date.now(), ok: false });
        this.noteRetry('connection dropped');
        await sleep(RETRY_PAUSE_MS);
        continue;
      }
      const data = reply.data;
      const ok = reply.status === 200 && data?.status === 'ok';
      this.samples.push({ action, start, end: Date.now(), ok });
      if (ok) {
        // The whole call as the client lived it, retries included.
        this.samples.push({ action: `${action}:call`, start: began, end: Date.now(), ok });
        return data!;
      }
      if (reply.status === 502 || reply.status === 503) this.noteRetry(`http ${reply.status}`);
      else if (reply.status !== 200 || !data) this.failures.push(`${action}: HTTP ${reply.status}`);
      else if (data.status === 'unavailable' && !data.operation) this.noteRetry('unavailable');
      else if (data.operation?.refusal?.code === 'agent_session_operation_unknown')
        this.noteRetry('operation running');
      else if (data.operation?.submission?.dispatch_state === 'unknown') {
        this.noteRetry('dispatch unknown');
        current = { ...request, retry_unknown: true };
      } else this.failures.push(`${action}: status ${data.status}`);
      await sleep(RETRY_PAUSE_MS);
    }
    throw new Error(`${action} was never answered ok`);
  }

  /** Watches until the turn after `from` finished. */
  private async waitIdle(base: Record<string, string>, from: number): Promise<number> {
    let cursor = from;
    const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const watched = await this.call({ ...base, action: 'watch', cursor: String(cursor) });
      cursor = watched.revision ?? cursor;
      if (!watched.running && cursor > from) return cursor;
    }
    throw new Error(`session ${base.session_id} did not finish its turn after revision ${from}`);
  }

  /** Follows one session's SSE stream, resuming from the last event id after any drop. */
  private async follow(sessionId: string, view: SseView): Promise<void> {
    const url = `${this.options.url}/api/v1/sessions/${sessionId}/events?${this.query}`;
    const stop = this.stopStreaming.signal;
    while (!stop.aborted) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${this.options.token}`,
        accept: 'text/event-stream',
      };
      if (view.lastEventId !== undefined) headers['last-event-id'] = view.lastEventId;
      try {
        const response = await fetch(url, { headers, signal: stop });
        if (response.status !== 200 || !response.body) {
          if ([502, 503].includes(response.status)) this.noteRetry(`sse ${response.status}`);
          else this.failures.push(`sse: HTTP ${response.status}`);
          await response.body?.cancel();
          await sleep(RETRY_PAUSE_MS);
          continue;
        }
        await this.read(response.body, view);
      } catch (error) {
        if (stop.aborted) return;
        // A killed api drops the stream mid-way (TypeError: terminated): resume like a browser.
        if ((error as Error).name !== 'TypeError') this.failures.push(`sse: ${(error as Error).message}`);
        await sleep(RETRY_PAUSE_MS);
      }
      view.reconnects += 1;
    }
  }

  private async read(body: ReadableStream<Uint8Array>, view: SseView): Promise<void> {
    let buffer = '';
    const decoder = new TextDecoder();
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let type = 'message';
        let id: string | undefined;
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) type = line.slice(7);
          else if (line.startsWith('id: ')) id = line.slice(4);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
        }
        if (data.length > 0) view.apply(type, id, data.join('\n'));
      }
    }
  }

  private async client(index: number): Promise<void> {
    const session = this.sessions[index % this.sessions.length]!;
    const base = { edge_id: this.options.edgeId, access_id: this.options.accessId, session_id: session.id };
    for (let round = 0; !this.stopSending.signal.aborted; round += 1) {
      await session.turns.run(async () => {
        if (this.stopSending.signal.aborted) return;
        const text = `client ${index} round ${round}`;
        const body: EdgeAgentRequest = { ...base, action: 'send', text };
        await this.call({
          ...body,
          client_operation_id: `${Date.now()}-${randomBytes(16).toString('hex')}`,
          payload_fingerprint: operationFingerprint('send', body),
        });
        session.sent.push(text);
        this.answered += 1;
        session.revision = await this.waitIdle(base, session.revision);
      });
    }
  }

  start(): void {
    for (let index = 0; index < this.options.clients; index += 1) {
      const view = new SseView();
      this.views.push(view);
      this.streams.push(this.follow(this.sessions[index % this.sessions.length]!.id, view));
      this.clients.push(this.client(index));
    }
  }

  /** Stops sending and waits for every turn in hand to finish; the SSE streams keep following. */
  async stopLoad(): Promise<void> {
    this.stopSending.abort();
    await Promise.all(this.clients);
  }

  async stopStreams(): Promise<void> {
    this.stopStreaming.abort();
    await Promise.all(this.streams);
  }

  /** The session a client follows. */
  sessionOf(client: number): LoadSession {
    return this.sessions[client % this.sessions.length]!;
  }

  /** Milliseconds from `at` to the end of the first request begun after it that succeeded. */
  recoveryAfter(at: number, action?: string): number | undefined {
    const ends = this.samples
      .filter((sample) => sample.ok && sample.start >= at && (!action || sample.action === action))
      .map((sample) => sample.end);
    return ends.length > 0 ? Math.min(...ends) - at : undefined;
  }

  /**
   * The p-th percentile of latency among samples of `action` begun in [from, to]: `send` for
   * single attempts, `send:call` for whole calls, retries included.
   */
  percentile(p: number, action: string, from: number, to: number): number | undefined {
    const latencies = this.samples
      .filter((sample) => sample.action === action && sample.start >= from && sample.start <= to)
      .map((sample) => sample.end - sample.start)
      .sort((a, b) => a - b);
    if (latencies.length === 0) return undefined;
    return latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
  }
}
