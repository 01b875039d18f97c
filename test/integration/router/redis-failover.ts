// Continuous edge updates through two router replicas while a Redis master is killed (issue 13):
// what the routers acknowledged is compared with what the journal holds afterwards. Redis is a
// cache of the journal (docs/architecture.md), so a head lost with the master's last writes is
// re-seeded from the stream; the journal itself must hold every acknowledged row exactly once.
import { jetstreamManager } from '@nats-io/jetstream';
import { journalMessageSchema } from '#contracts';
import { decodeJson, requestService } from '#messaging';
import { sessionId, sessionUpdate, type Suite } from '../../support/router.js';

const SESSIONS = 8;
const BEFORE_KILL_MS = 1_500;
const AFTER_FAILOVER_MS = 2_000;
const REQUEST_TIMEOUT_MS = 5_000;
const RETRY_PAUSE_MS = 50;

interface Writer {
  sid: string;
  /** Revisions the router acknowledged, in order. */
  acked: number[];
  failures: number;
  /** When this session's first update sent after the kill was acknowledged. */
  firstAckAfterKill?: number;
}

export interface FailoverReport {
  killedPort: number;
  acked: number;
  failures: number;
  /** Kill → first acknowledged update sent after it (any session). */
  firstSuccessMs: number;
  /** Kill → every session had an update acknowledged again (the sessions on the killed master last). */
  allSessionsMs: number;
  /** Kill → the harness saw the topology healed (a replica promoted). */
  failoverMs: number;
  /** Rows per session whose revision the journal holds other than exactly once. */
  lostOrDuplicated: { sid: string; revision: number; rows: number }[];
  errorCodes: Record<string, number>;
}

async function journalRevisions(suite: Suite, sid: string): Promise<Map<number, number>> {
  const jsm = await jetstreamManager(suite.nc);
  const info = await jsm.streams.info(suite.subjects.sessionsStream);
  const counts = new Map<number, number>();
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
    const message = await jsm.streams.getMessage(suite.subjects.sessionsStream, { seq }).catch(() => null);
    if (message?.subject !== suite.subjects.sessionJournal(sid)) continue;
    const row = journalMessageSchema.parse(decodeJson(message.data));
    if ('kind' in row) continue;
    counts.set(row.revision, (counts.get(row.revision) ?? 0) + 1);
  }
  return counts;
}

/** Runs the traffic, kills a master after BEFORE_KILL_MS, waits for the failover, checks the journal. */
export async function trafficThroughFailover(
  suite: Suite,
  topology: { killMaster(): Promise<number>; waitForFailover(): Promise<void> },
): Promise<FailoverReport> {
  const writers: Writer[] = Array.from({ length: SESSIONS }, () => ({
    sid: sessionId(),
    acked: [],
    failures: 0,
  }));
  const errorCodes: Record<string, number> = {};
  let killedAt = Number.POSITIVE_INFINITY;
  let stopping = false;
  const loop = async (writer: Writer) => {
    let revision = 1;
    while (!stopping) {
      const sentAt = Date.now();
      try {
        await requestService(
          suite.nc,
          suite.subjects,
          'routerSessionUpdate',
          sessionUpdate({ session_id: writer.sid, revision }),
          { timeoutMs: REQUEST_TIMEOUT_MS },
        );
        writer.acked.push(revision);
        if (sentAt >= killedAt && writer.firstAckAfterKill === undefined)
          writer.firstAckAfterKill = Date.now();
        revision += 1;
      } catch (error) {
        // As an edge does: the same revision again, after a pause.
        writer.failures += 1;
        const code = String((error as { code?: unknown }).code ?? (error as Error).message);
        errorCodes[code] = (errorCodes[code] ?? 0) + 1;
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    }
  };
  const running = writers.map(loop);
  await new Promise((resolve) => setTimeout(resolve, BEFORE_KILL_MS));
  const killedPort = await topology.killMaster();
  killedAt = Date.now();
  await topology.waitForFailover();
  const failoverMs = Date.now() - killedAt;
  const deadline = Date.now() + 30_000;
  while (writers.some((writer) => writer.firstAckAfterKill === undefined) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, AFTER_FAILOVER_MS));
  stopping = true;
  await Promise.all(running);

  const lostOrDuplicated: FailoverReport['lostOrDuplicated'] = [];
  for (const writer of writers) {
    const stored = await journalRevisions(suite, writer.sid);
    for (const revision of writer.acked) {
      const rows = stored.get(revision) ?? 0;
      if (rows !== 1) lostOrDuplicated.push({ sid: writer.sid, revision, rows });
    }
  }
  const recovered = writers.map((writer) => (writer.firstAckAfterKill ?? Number.NaN) - killedAt);
  return {
    killedPort,
    acked: writers.reduce((sum, writer) => sum + writer.acked.length, 0),
    failures: writers.reduce((sum, writer) => sum + writer.failures, 0),
    firstSuccessMs: Math.min(...recovered),
    allSessionsMs: Math.max(...recovered),
    failoverMs,
    lostOrDuplicated,
    errorCodes,
  };
}
