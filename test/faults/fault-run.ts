// The fault run both fault suites share: 16 clients in a closed loop of enveloped sends, watches
// and SSE streams over a few sessions of one edge, while a list of faults is applied in turn
// (each: take something down, wait, bring it back, wait until it answers, until a send is
// answered ok again and until Postgres holds every acknowledged send). It records, per fault,
// the failed requests (and whether the contract calls each retryable), acknowledged sends lost or
// stored twice, recovery and catch-up times and the latency of the calls answered during the
// fault; `expectNothingLost` then asserts what must hold whatever the timings: every failure
// retryable, 0 lost, 0 duplicated, history caught up, every SSE view equal to what was sent.
import { expect } from '@jest/globals';
import pg from 'pg';
import { LoadClient, SseView, storedUserTexts, Turns } from '../support/closed-loop.js';
import type { E2eStack } from '../support/e2e-stack.js';
import { failureKinds, figuresOf, table, type FaultFigures, type FaultWindow } from './figures.js';

export interface Fault {
  name: string;
  down(): Promise<void>;
  /** How long it stays down before it is started again. */
  downMs: number;
  up(): Promise<void>;
  /** Resolves once it answers again. */
  ready(): Promise<void>;
}

export interface FaultRunSetup {
  client: LoadClient;
  /** The stack under test: its owner's client reads history pages; its database is checked. */
  e2e: Pick<E2eStack, 'owner' | 'database'>;
  edgeId: string;
  accessId: string;
  /** The sessions the clients share (an edge keeps at most 4 live), at their start revision. */
  sessions: { id: string; revision: number }[];
  clients: number;
  /** The faults, in order; TETHER_FAULTS_ONLY=a,b keeps those whose names start so (to investigate one). */
  faults: Fault[];
  /** The stack's recent output, printed when a bound is missed. */
  output(): string;
  /** Bounds and pacing of the run. */
  timing: {
    boundMs: number;
    /**
     * How long history may take to hold every acknowledged send after a fault: this, plus
     * CATCH_UP_PER_SEND_MS for each send acknowledged since the fault began. The load goes on
     * while history works off the backlog an outage left (a Postgres stop leaves thousands of
     * sends), so the time it takes grows with that backlog; the check is that it catches up.
     */
    catchUpBoundMs: number;
    pauseMs: number;
    pollEveryMs: number;
    warmupSends: number;
    settleSends: number;
  };
}

/** Catch-up time allowed per send acknowledged since a fault began (see `catchUpBoundMs`). */
const CATCH_UP_PER_SEND_MS = 15;

interface Sent {
  text: string;
  operationId: string;
  fault: string;
  session: number;
  /** When the client began and when it was answered ok (epoch ms). */
  startedAt: number;
  at: number;
  /** Each attempt's operation id tail and verdict (closed-loop.ts). */
  trail: string[];
}

export interface FaultRunResult {
  rows: FaultFigures[];
  sent: Sent[];
  views: SseView[];
  /** Faults after which Postgres did not hold every acknowledged send as accepted. */
  behind: string[];
  /** Acknowledged sends of the warm-up (before any fault), lost and duplicated. */
  warmup: { acked: number; lost: number; duplicated: number };
  /** Accepted submissions in Postgres among every acknowledged send. */
  accepted: number;
  /** The acknowledged sends Postgres does not hold as accepted, with what it holds instead. */
  notAccepted: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class FaultRun {
  private readonly sent: Sent[] = [];
  /** Every acknowledged send's end and duration as its client saw it (retries included). */
  private readonly sendTimes: { at: number; ms: number }[] = [];
  private readonly views: SseView[] = [];
  private readonly streams: Promise<void>[] = [];
  private readonly stopSending = new AbortController();
  private readonly stopStreaming = new AbortController();
  private current = 'warm-up';

  constructor(private readonly setup: FaultRunSetup) {}

  /** Resolves with the time `probe` first held; throws after `boundMs`. */
  async until(
    probe: () => Promise<boolean>,
    what: string,
    boundMs = this.setup.timing.boundMs,
  ): Promise<number> {
    const deadline = Date.now() + boundMs;
    while (!(await probe().catch(() => false))) {
      if (Date.now() > deadline)
        throw new Error(`${what} did not happen within ${boundMs} ms\n${this.setup.output()}`);
      await sleep(this.setup.timing.pauseMs);
    }
    return Date.now();
  }

  /** Runs the load, applies every fault in turn, stops the load and reads what history holds. */
  async run(): Promise<FaultRunResult> {
    const load = this.startLoad();
    const { timing } = this.setup;
    await this.until(() => Promise.resolve(this.sent.length >= timing.warmupSends), 'the load flowing');
    const windows: FaultWindow[] = [];
    const behind: string[] = [];
    const only = process.env.TETHER_FAULTS_ONLY?.split(',');
    const faults = this.setup.faults.filter(
      (fault) => !only || only.some((prefix) => fault.name.startsWith(prefix)),
    );
    for (const fault of faults) {
      const window = await this.apply(fault, behind);
      windows.push(window);
      const from = Number.isNaN(window.caughtUpAt) ? window.recoveredAt : window.caughtUpAt;
      await this.until(
        () => Promise.resolve(this.sendsAfter(from).length >= timing.settleSends),
        `the load flowing after ${fault.name}`,
      );
    }
    for (const [index, window] of windows.entries()) window.endAt = windows[index + 1]?.downAt ?? Date.now();
    this.stopSending.abort();
    await load;
    return this.collect(windows, behind);
  }

  private startLoad(): Promise<unknown> {
    const { client, edgeId, accessId, timing } = this.setup;
    const sessions = this.setup.sessions.map(({ id, revision }) => ({ id, revision, turns: new Turns() }));
    const query = `edge_id=${edgeId}&access_id=${accessId}`;
    const clients = Array.from({ length: this.setup.clients }, async (_, index) => {
      const session = sessions[index % sessions.length]!;
      const base = { edge_id: edgeId, access_id: accessId, session_id: session.id };
      const view = new SseView();
      this.views.push(view);
      this.streams.push(
        client.follow(`/api/v1/sessions/${session.id}/events?${query}`, view, this.stopStreaming.signal),
      );
      for (let round = 0; !this.stopSending.signal.aborted; round += 1) {
        await session.turns.run(async () => {
          if (this.stopSending.signal.aborted) return;
          const fault = this.current;
          const text = `${fault} / client ${index} round ${round}`;
          const startedAt = Date.now();
          const { operationId, trail } = await client.send(base, text);
          const at = Date.now();
          this.sendTimes.push({ at, ms: at - startedAt });
          this.sent.push({
            text,
            operationId,
            fault,
            session: index % sessions.length,
            startedAt,
            at,
            trail,
          });
          session.revision = await client.waitIdle(base, session.revision, timing.boundMs);
        });
      }
    });
    // Single poll attempts on one session, to see which reads still answer while something is down.
    const polls = (async () => {
      const request = { edge_id: edgeId, access_id: accessId, session_id: sessions[0]!.id, action: 'poll' };
      while (!this.stopSending.signal.aborted) {
        await client.attempt(request);
        await sleep(timing.pollEveryMs);
      }
    })();
    return Promise.all([...clients, polls]).catch((error: unknown) => {
      // The services' output is the evidence of a client that gave up.
      console.log(this.setup.output().split('\n').slice(-150).join('\n'));
      throw error;
    });
  }

  private sendsAfter(at: number) {
    return this.setup.client.answered.filter((call) => call.action === 'send' && call.at > at);
  }

  /** One fault: down, back, ready, a send answered again, Postgres caught up. */
  private async apply(fault: Fault, behind: string[]): Promise<FaultWindow> {
    const { client, timing } = this.setup;
    this.current = fault.name;
    const downAt = Date.now();
    await fault.down();
    await sleep(fault.downMs);
    await fault.up();
    const returnedAt = Date.now();
    const readyAt = await this.until(async () => (await fault.ready(), true), `${fault.name} ready again`);
    await this.until(
      () => Promise.resolve(this.sendsAfter(returnedAt).length > 0),
      `a send after ${fault.name}`,
    ).catch((error) => {
      const recent = client.misses.filter((miss) => miss.at >= downAt).slice(-40);
      console.log(recent.map((miss) => `${miss.at - downAt} ms ${miss.action}: ${miss.what}`).join('\n'));
      throw error;
    });
    const recoveredAt = this.sendsAfter(returnedAt)[0]!.at;
    const acked = this.sent.map((send) => send.operationId);
    const backlog = this.sent.filter((send) => send.at >= downAt).length;
    // A fault after which history never catches up is recorded (and fails the test at the end),
    // so the other faults still run and report.
    const caughtUpAt = await this.until(
      async () => (await this.submissions(acked)).accepted === acked.length,
      `history holding every send acknowledged by ${fault.name}`,
      timing.catchUpBoundMs + backlog * CATCH_UP_PER_SEND_MS,
    ).catch(async () => {
      behind.push(`${fault.name}: ${JSON.stringify(await this.submissions(acked))} of ${acked.length}`);
      return Number.NaN;
    });
    return { name: fault.name, downAt, returnedAt, readyAt, recoveredAt, caughtUpAt, endAt: 0 };
  }

  /** What history holds, session by session, compared with what was acknowledged. */
  private async collect(windows: FaultWindow[], behind: string[]): Promise<FaultRunResult> {
    const { client, edgeId, accessId } = this.setup;
    const { owner } = this.setup.e2e;
    const sessionIds = this.setup.sessions.map((session) => session.id);
    const query = `edge_id=${edgeId}&access_id=${accessId}`;
    // One bound for all sessions: a history that lost sends must fail the run, not time it out.
    const stored = new Map<number, string[]>();
    const read = async (index: number) => (await storedUserTexts(owner, sessionIds[index]!, query)) ?? [];
    await this.until(async () => {
      for (const index of sessionIds.keys()) {
        if (stored.get(index)?.length === this.sent.filter((send) => send.session === index).length) continue;
        stored.set(index, await read(index));
      }
      return sessionIds.every(
        (_, index) => stored.get(index)!.length >= this.sent.filter((send) => send.session === index).length,
      );
    }, "history holding every session's sends").catch(() => undefined);
    for (const index of sessionIds.keys()) if (!stored.has(index)) stored.set(index, []);
    const copies = (send: Sent) => stored.get(send.session)!.filter((text) => text === send.text).length;
    const effects = (fault: string) => {
      const acked = this.sent.filter((send) => send.fault === fault);
      return {
        acked: acked.length,
        lost: acked.filter((send) => copies(send) === 0).length,
        duplicated: acked.filter((send) => copies(send) > 1).length,
      };
    };
    const rows = windows.map((window) =>
      figuresOf(window, client.misses, client.answered, effects(window.name), this.sendTimes),
    );
    await this.until(
      () =>
        Promise.resolve(
          this.views.every(
            (view, index) =>
              view.userTexts().length >=
              this.sent.filter((s) => s.session === index % sessionIds.length).length,
          ),
        ),
      'every SSE client caught up',
    ).catch(() => undefined);
    this.stopStreaming.abort();
    await Promise.all(this.streams);
    console.log(
      `fault run: ${this.sent.length} sends acknowledged, ${client.answered.length} calls answered ok, ` +
        `retryable answers ${JSON.stringify(Object.fromEntries(client.retried))}, ` +
        `SSE reconnects ${this.views.map((view) => view.reconnects).join(',')}\n${table(rows)}\n${failureKinds(rows)}`,
    );
    // Once the load stopped, history must come to hold every acknowledged send, however far
    // behind the load left it (a clustered run on a small machine outruns its history replicas).
    const all = this.sent.map((send) => send.operationId);
    let accepted = 0;
    await this.until(async () => {
      accepted = (await this.submissions(all)).accepted ?? 0;
      return accepted === all.length;
    }, 'history holding every acknowledged send').catch(() => undefined);
    const notAccepted = accepted === all.length ? [] : await this.notAccepted();
    const lost = this.sent.filter((send) => copies(send) !== 1);
    if (behind.length > 0 || notAccepted.length > 0 || lost.length > 0) {
      // A failed run explains itself: what is missing or doubled, and what the stack said last.
      console.log(
        [
          ...behind.map((line) => `behind: ${line}`),
          ...lost.map((send) => {
            // Which fault windows the send spanned, and every attempt: a send started in one
            // window may be doubled by the next fault.
            const spanned = windows.filter((w) => w.downAt <= send.at && send.startedAt <= w.endAt);
            return (
              `${copies(send)} copies: ${send.operationId} of session ${send.session} (${send.fault}), ` +
              `spanning ${spanned.map((w) => w.name).join(', ') || 'no fault'}; attempts: ${send.trail.join(' → ')}`
            );
          }),
          ...notAccepted,
          this.setup.output(),
        ].join('\n'),
      );
    }
    return {
      rows,
      sent: this.sent,
      views: this.views,
      behind,
      warmup: effects('warm-up'),
      accepted,
      notAccepted,
    };
  }

  /**
   * Each acknowledged send Postgres does not hold as accepted: its fault window, its state and
   * reason there (or `missing`), and what the stack logged about it, to explain a failed run.
   */
  private async notAccepted(): Promise<string[]> {
    const db = new pg.Client({ connectionString: this.setup.e2e.database.url });
    await db.connect();
    try {
      const result = await db.query<{
        client_message_id: string;
        dispatch_state: string;
        reason: string | null;
      }>(
        `SELECT client_message_id, dispatch_state, concat_ws(' ', reason, 'created at', epoch, sequence, submitted_at) AS reason
          FROM journal_submissions WHERE client_message_id = ANY($1)`,
        [this.sent.map((send) => send.operationId)],
      );
      const rows = await db.query<{ client_message_id: string; epoch: string; sequence: string; at: string }>(
        `SELECT client_message_id, epoch, sequence::text, recorded_at::text AS at FROM journal
          WHERE client_message_id = ANY($1) ORDER BY recorded_at`,
        [this.sent.map((send) => send.operationId)],
      );
      const journaled = (id: string) =>
        rows.rows
          .filter((row) => row.client_message_id === id)
          .map((row) => `${row.epoch}:${row.sequence} ${row.at}`);
      const held = new Map(result.rows.map((row) => [row.client_message_id, row]));
      const logs = this.setup.output().split('\n');
      return this.sent
        .filter((send) => held.get(send.operationId)?.dispatch_state !== 'accepted')
        .map((send) => {
          const row = held.get(send.operationId);
          const state = row
            ? `${row.dispatch_state} (${row.reason ?? 'no reason'}), journal rows ${journaled(send.operationId).join(', ')}`
            : 'missing';
          const said = logs.filter((line) => line.includes(send.operationId)).slice(-10);
          return [`${send.operationId} of session ${send.session} (${send.fault}): ${state}`, ...said].join(
            '\n  ',
          );
        });
    } finally {
      await db.end();
    }
  }

  /** The submissions of these operation ids in Postgres (history's journal of sends), by state. */
  private async submissions(operationIds: string[]): Promise<Record<string, number>> {
    const db = new pg.Client({ connectionString: this.setup.e2e.database.url });
    await db.connect();
    try {
      const result = await db.query<{ dispatch_state: string; count: string }>(
        `SELECT dispatch_state, count(*) FROM journal_submissions WHERE client_message_id = ANY($1) GROUP BY 1`,
        [operationIds],
      );
      const states: Record<string, number> = {};
      for (const row of result.rows) states[row.dispatch_state] = Number(row.count);
      states.missing = operationIds.length - Object.values(states).reduce((sum, count) => sum + count, 0);
      return states;
    } finally {
      await db.end();
    }
  }
}

/**
 * What must hold after any fault run, whatever its timings. `perFaultCatchUp`: history also had
 * to hold every send acknowledged so far within the catch-up bound after each fault (not asked of
 * a run whose load outpaces history on purpose; its catch-up times are reported instead).
 */
export function expectNothingLost(
  result: FaultRunResult,
  client: LoadClient,
  sessions: number,
  perFaultCatchUp = true,
): void {
  // Every failed request was one the contract tells a client to retry; nothing was lost or doubled.
  expect(client.failures).toEqual([]);
  expect(result.rows.map((row) => [row.fault, row.lost, row.duplicated])).toEqual(
    result.rows.map((row) => [row.fault, 0, 0]),
  );
  expect([result.warmup.lost, result.warmup.duplicated]).toEqual([0, 0]);
  // History (Postgres) holds each acknowledged send as one accepted submission.
  if (perFaultCatchUp) expect(result.behind).toEqual([]);
  expect(result.notAccepted).toEqual([]);
  expect(result.accepted).toBe(result.sent.length);
  // Every client's SSE view holds its session's sends exactly once.
  const sorted = (texts: string[]) => [...texts].sort();
  result.views.forEach((view, index) => {
    const mine = result.sent.filter((send) => send.session === index % sessions).map((send) => send.text);
    expect(sorted(view.userTexts())).toEqual(sorted(mine));
  });
}
