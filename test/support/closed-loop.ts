// The closed loop of clients that the rollout and fault suites run against a live stack: enveloped
// sends retried with the same operation id on every answer the contract calls retryable
// (docs/reliability.md), watches to each turn's end, SSE streams resumed from their last event id,
// and the checks that history and every stream hold each acknowledged send exactly once.
// Kept out of `#test-support`'s index like e2e-stack.ts.
import { randomBytes } from 'node:crypto';
import {
  operationFingerprint,
  type EdgeAgentRequest,
  type JournalItem,
  type JournalSnapshot,
} from '#contracts';
import type { E2eStack } from './e2e-stack.js';
import type { ApiClient } from './http.js';
import { sleep } from './polling.js';
import { SseParser } from './sse-parser.js';

/** The parts of an EdgeAgentResult a load client reads. */
export interface LoadSnapshot {
  status: string;
  session_id?: string;
  revision?: number;
  running?: boolean;
  installations?: { id: string; kind: string }[];
  operation?: {
    replayed?: boolean;
    refusal?: { code: string };
    submission?: { dispatch_state?: string };
  };
}

/** One answer that was not the `ok` the client wanted, as the client judged it. */
export interface Miss {
  at: number;
  action: string;
  /** `http 503`, `status busy`, `transport: fetch failed`, ... */
  what: string;
  /** The contract says: retry (the same operation id). */
  retryable: boolean;
}

export interface LoadClientOptions {
  /** The api (or balancer) URL, read on every request. */
  url: () => string;
  token: string;
  /** A call taking longer than this is abandoned and retried with the same id. */
  timeoutMs: number;
  /**
   * Whether a transport error (refused or dropped connection, client timeout) is retryable. Behind
   * a balancer no request may meet one; with a single api that is killed, a client resends.
   */
  transportRetryable: boolean;
  /**
   * A session call answered `not_found` because a restarted edge lost the session (its runtime
   * lived in the old process) is followed by `resume` and sent again, a send under a new
   * operation id (the refusal is the old id's recorded outcome; nothing ran): what a client does
   * after an edge restart (test/e2e/resume.test.ts). Otherwise `not_found` is a failure.
   */
  resumeLostSessions?: boolean;
  pauseMs?: number;
  attemptsMax?: number;
}

const RENEW_BACKOFF_MAX_MS = 3_000;
const newOperationId = () => `${Date.now()}-${randomBytes(16).toString('hex')}`;

/** What the contract tells a client after this answer (docs/reliability.md, "What a client does"). */
export function judge(
  status: number,
  data: LoadSnapshot | undefined,
): 'ok' | 'retry' | 'renew' | 'resend' | 'fail' {
  if (status === 503 || status === 429) return 'retry';
  if (status !== 200 || !data) return 'fail';
  const dispatch = data.operation?.submission?.dispatch_state;
  if (dispatch === 'unknown') return 'resend';
  if (data.status === 'ok') return 'ok';
  if (data.status !== 'unavailable' && data.status !== 'busy') return 'fail';
  // A send `rejected` (the edge unreachable or busy) ran nothing, and its id replays that answer
  // for ever: the send is made again under a new id.
  if (dispatch === 'rejected') return 'renew';
  // `unavailable` (router or edge unreachable, or an operation still running) and `busy`.
  return 'retry';
}

/** How long a new session's SSE stream may answer 404 before history has its first row. */
const NEW_SESSION_GRACE_MS = 5_000;

type Verdict = 'retry' | 'renew' | 'resend' | 'resume' | 'resume-unknown' | 'fail';

export class LoadClient {
  /** Answers no retry may fix (and transport errors where none is allowed): must stay empty. */
  readonly failures: string[] = [];
  /** Every answer that was not `ok`, in time order. */
  readonly misses: Miss[] = [];
  /** Retryable answers by kind, the client resent them. */
  readonly retried = new Map<string, number>();
  /** Every call answered ok, in time order. */
  readonly answered: { at: number; action: string }[] = [];

  constructor(private readonly options: LoadClientOptions) {}

  private miss(action: string, what: string, retryable: boolean): void {
    this.misses.push({ at: Date.now(), action, what, retryable });
    if (retryable) this.retried.set(what, (this.retried.get(what) ?? 0) + 1);
    else this.failures.push(`${action}: ${what}`);
  }

  private async post(request: Record<string, unknown>): Promise<{ status: number; data?: LoadSnapshot }> {
    const response = await fetch(`${this.options.url()}/api/v1/edge-agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.options.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    const text = await response.text();
    return { status: response.status, data: (JSON.parse(text) as { data?: LoadSnapshot }).data };
  }

  /** One attempt, judged and recorded: the snapshot when it was answered ok, else the verdict. */
  async attempt(request: Record<string, unknown>): Promise<LoadSnapshot | Verdict> {
    return (await this.judged(request)).outcome;
  }

  /** `attempt`, with what was wrong with the answer when it was not ok. */
  private async judged(
    request: Record<string, unknown>,
  ): Promise<{ outcome: LoadSnapshot | Verdict; what?: string }> {
    const action = String(request.action);
    let reply: { status: number; data?: LoadSnapshot };
    try {
      reply = await this.post(request);
    } catch (error) {
      const retryable = this.options.transportRetryable;
      const what = `transport: ${(error as Error).message}`;
      this.miss(action, what, retryable);
      return { outcome: retryable ? 'retry' : 'fail', what };
    }
    const verdict = judge(reply.status, reply.data);
    if (verdict === 'ok') {
      this.answered.push({ at: Date.now(), action });
      return { outcome: reply.data! };
    }
    const lost = reply.data?.status === 'not_found' && request.session_id !== undefined;
    if (lost && this.options.resumeLostSessions && action !== 'resume') {
      const what = 'status not_found (session resumed)';
      this.miss(action, what, true);
      return { outcome: verdict === 'resend' ? 'resume-unknown' : 'resume', what };
    }
    const what =
      reply.status !== 200 || !reply.data
        ? `http ${reply.status}`
        : verdict === 'resend' || verdict === 'renew'
          ? `dispatch ${reply.data.operation?.submission?.dispatch_state} (${reply.data.status})`
          : `status ${reply.data.status}${reply.data.operation?.refusal ? ` ${reply.data.operation.refusal.code}` : ''}`;
    this.miss(action, what, verdict !== 'fail');
    return { outcome: verdict, what };
  }

  /**
   * One call, retried with the very same request on every answer but `ok` (a failure is recorded,
   * not thrown: the suite asserts on the record); a send settled `unknown` is resent with
   * `retry_unknown`, the contract's way to settle it.
   */
  async call(request: Record<string, unknown>): Promise<LoadSnapshot> {
    return (await this.run(request)).answer;
  }

  /**
   * `call`, also returning the request that was answered (a resent send has a new id) and the
   * trail of its attempts (`<operation id tail> <verdict>`), which explains a send stored twice.
   */
  private async run(
    request: Record<string, unknown>,
  ): Promise<{ answer: LoadSnapshot; answered: Record<string, unknown>; trail: string[] }> {
    let first = request;
    let current = request;
    let renewals = 0;
    const trail: string[] = [];
    for (let attempt = 0; attempt < (this.options.attemptsMax ?? 300); attempt += 1) {
      const { outcome, what } = await this.judged(current);
      const id =
        typeof current.client_operation_id === 'string' ? current.client_operation_id.slice(-8) : '-';
      const sent = current.retry_unknown ? `${id} retry_unknown` : id;
      trail.push(`${sent} ${typeof outcome === 'object' ? 'ok' : `${outcome} (${what})`}`);
      if (typeof outcome === 'object') return { answer: outcome, answered: current, trail };
      if (outcome === 'resend') current = { ...first, retry_unknown: true };
      if (outcome === 'renew' && first.client_operation_id !== undefined) {
        first = { ...first, client_operation_id: newOperationId() };
        current = first;
        // Each new id is a ledger record (a session holds TETHER_OPERATIONS_PER_SESSION_MAX):
        // back off while the edge stays unreachable instead of minting one every pause.
        renewals += 1;
        await sleep(Math.min(RENEW_BACKOFF_MAX_MS, (this.options.pauseMs ?? 200) * 2 ** renewals));
      }
      if (outcome === 'resume') {
        const { edge_id, access_id, session_id } = request;
        await this.call({ edge_id, access_id, session_id, action: 'resume' });
        renewals += 1;
        await sleep(Math.min(RENEW_BACKOFF_MAX_MS, (this.options.pauseMs ?? 200) * 2 ** renewals));
        if (first.client_operation_id !== undefined)
          first = { ...first, client_operation_id: newOperationId() };
        current = first;
      }
      if (outcome === 'resume-unknown') {
        // An `unknown` send on a lost session: resume it, then settle the same id with
        // retry_unknown (docs/reliability.md); retrying it without the resume finds nothing.
        const { edge_id, access_id, session_id } = request;
        await this.call({ edge_id, access_id, session_id, action: 'resume' });
        current = { ...first, retry_unknown: true };
      }
      await sleep(this.options.pauseMs ?? 200);
    }
    const recent = this.misses.filter((miss) => miss.action === request.action).slice(-3);
    throw new Error(
      `${String(request.action)} was never answered ok; lately: ${recent.map((miss) => miss.what).join(', ')}`,
    );
  }

  /** An enveloped send of `text`: a fresh operation id, retried until it is answered ok. */
  async send(
    base: Record<string, string>,
    text: string,
  ): Promise<{ operationId: string; answer: LoadSnapshot; trail: string[] }> {
    const body: EdgeAgentRequest = { ...base, action: 'send', text } as EdgeAgentRequest;
    const { answer, answered, trail } = await this.run({
      ...body,
      client_operation_id: newOperationId(),
      payload_fingerprint: operationFingerprint('send', body),
    });
    return { operationId: String(answered.client_operation_id), answer, trail };
  }

  /** Watches until the turn after `from` finished. */
  async waitIdle(base: Record<string, string>, from: number, boundMs: number): Promise<number> {
    let cursor = from;
    const deadline = Date.now() + boundMs;
    while (Date.now() < deadline) {
      const watched = await this.call({ ...base, action: 'watch', cursor: String(cursor) });
      cursor = watched.revision ?? cursor;
      if (!watched.running && cursor > from) return cursor;
    }
    throw new Error(`session ${base.session_id} did not finish its turn after revision ${from}`);
  }

  /** Follows one session's SSE stream, resuming from the last event id, until `stop`. */
  async follow(path: string, view: SseView, stop: AbortSignal): Promise<void> {
    let notFoundUntil: number | undefined;
    while (!stop.aborted) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${this.options.token}`,
        accept: 'text/event-stream',
      };
      if (view.lastEventId !== undefined) headers['last-event-id'] = view.lastEventId;
      try {
        const response = await fetch(`${this.options.url()}${path}`, { headers, signal: stop });
        if (response.status !== 200 || !response.body) {
          // A session started a moment ago through another replica may not have reached history
          // yet: its stream answers 404 for a short while, and a client retries (as the console
          // does). Once a stream has been open, or past the grace, a 404 is a failure.
          const unknownYet =
            response.status === 404 &&
            view.lastEventId === undefined &&
            Date.now() < (notFoundUntil ??= Date.now() + NEW_SESSION_GRACE_MS);
          this.miss('sse', `http ${response.status}`, response.status === 503 || unknownYet);
          await response.body?.cancel();
          await sleep(this.options.pauseMs ?? 200);
          continue;
        }
        await view.read(response.body);
      } catch (error) {
        // The client's own abort ends the run; a stream the api ended (or a refused connection
        // while it restarts) just resumes.
        if (stop.aborted) return;
        if ((error as Error).name !== 'TypeError') this.miss('sse', (error as Error).message, false);
        else await sleep(this.options.pauseMs ?? 200);
      }
      view.reconnects += 1;
    }
  }
}

/** A client's view of its session's journal, from the SSE events it applied (and the cursor to resume from). */
export class SseView {
  items = new Map<string, JournalItem>();
  lastEventId: string | undefined;
  reconnects = 0;

  async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const parser = new SseParser((event) => this.apply(event.type, event.id, event.data));
    const decoder = new TextDecoder();
    for await (const chunk of body) parser.push(decoder.decode(chunk, { stream: true }));
  }

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

  /** The items in journal order (sequence, then id). */
  view(): JournalItem[] {
    return [...this.items.values()].sort(
      (a, b) => a.sequence - b.sequence || a.itemId.localeCompare(b.itemId),
    );
  }

  userTexts(): string[] {
    return userTexts([...this.items.values()]);
  }
}

export function userTexts(items: JournalItem[]): string[] {
  return items
    .filter((item) => item.body?.['type'] === 'message' && item.body['role'] === 'user')
    .map((item) => String(item.body?.['text']));
}

/** Bounds the pages read back through one session's journal (200 items a page). */
const HISTORY_PAGES_MAX = 50;

/**
 * Every user message history holds for the session, read page by page from the tail back (a busy
 * run writes more than one page of items); undefined while history cannot answer.
 */
export async function storedUserTexts(
  client: ApiClient,
  sessionId: string,
  query: string,
): Promise<string[] | undefined> {
  const items = new Map<string, JournalItem>();
  let cursor: string | undefined;
  for (let page = 0; page < HISTORY_PAGES_MAX; page += 1) {
    const direction = cursor === undefined ? 'tail' : `before&cursor=${encodeURIComponent(cursor)}`;
    const reply = await client.call<{
      ok: boolean;
      page: {
        items: JournalItem[];
        hasOlder: boolean;
        window: { oldest: { epoch: string; sequence: number } | null };
      };
      snapshot: { items: JournalItem[] };
    }>('GET', `/api/v1/sessions/${sessionId}/history?${query}&direction=${direction}&limit=200`);
    const data = reply.body.data;
    if (!data) return undefined;
    if (!data.ok) return userTexts(data.snapshot.items);
    for (const item of data.page.items) items.set(item.itemId, item);
    const oldest = data.page.window.oldest;
    if (!data.page.hasOlder || !oldest) break;
    cursor = `${oldest.epoch}:${oldest.sequence}`;
  }
  return userTexts([...items.values()]);
}

/** One session's lock: its clients take turns at send + watch (a session runs one turn at a time). */
export class Turns {
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

/**
 * A saved access of the stack edge's scripted installation (created by the stack's owner), and
 * `count` sessions of it started through `client`: what every load suite begins with.
 */
export async function startScriptedSessions(
  client: LoadClient,
  e2e: Pick<E2eStack, 'stack' | 'owner' | 'projectDir'>,
  name: string,
  count: number,
): Promise<{ edgeId: string; accessId: string; sessions: { id: string; revision: number }[] }> {
  const edgeId = e2e.stack.edge!.id;
  const discovered = await client.call({ edge_id: edgeId, action: 'discover' });
  const installation = discovered.installations!.find((candidate) => candidate.kind === 'scripted')!;
  const created = await e2e.owner.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name,
    kind: 'scripted',
    edge_id: edgeId,
    installation_id: installation.id,
    project: e2e.projectDir,
  });
  if (created.status !== 200) throw new Error(`the saved access was refused: HTTP ${created.status}`);
  const accessId = created.body.data!.id;
  const sessions: { id: string; revision: number }[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = await client.call({
      edge_id: edgeId,
      action: 'start',
      access_id: accessId,
      installation_id: installation.id,
      project: e2e.projectDir,
    });
    sessions.push({ id: started.session_id!, revision: started.revision ?? 0 });
  }
  return { edgeId, accessId, sessions };
}
