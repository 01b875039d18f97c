// A backlog of session-journal rows written straight onto the journal subjects of the sessions
// stream, the way the router appends them: per session one epoch, `sequence` 1..N, each row
// chained to the subject's previous stream sequence (`prev_stream_seq`, 0 for the first) and
// published under that expected-last-subject-sequence with the router's dedup id. B4 --drain
// uses it to give a stopped history more than the router-driven producers can (history's own
// capacity, not the producers').
import { randomBytes } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { EDGE_AGENT_RPC_VERSION, journalEntrySchema, type JournalEntry, type Subjects } from '#contracts';
import { encodeJson, JournalCipher } from '#messaging';
import { DEV_JOURNAL_KEY } from '../../scripts/stack/launcher.js';

/** JetStream may be slow to ack on a busy 2-core box; a lost publish fails the run instead. */
const PUBLISH_TIMEOUT_MS = 15_000;

export interface BacklogSpec {
  sessionIds: string[];
  rowsPerSession: number;
  edgeId: string;
  actorId: string;
  /** A saved access of `actorId` on `edgeId`: history keeps journal rows of saved sessions only. */
  accessId: string;
}

export interface Backlog {
  rows: number;
  /** Session id → the stream sequence of its last row (history's head must end there). */
  lastStreamSequence: Map<string, number>;
  publish_s: number;
}

/** One row shaped like the bench's producers' updates (FakeEdge), as the router journals it. */
function entry(
  spec: BacklogSpec,
  sessionId: string,
  epoch: string,
  sequence: number,
  prev: number,
): JournalEntry {
  const now = Date.now();
  return {
    v: 1,
    session_id: sessionId,
    edge_id: spec.edgeId,
    actor_id: spec.actorId,
    access_id: spec.accessId,
    epoch,
    // One edge revision per row, like the producers (revision = sequence in a fresh epoch).
    revision: sequence,
    sequence,
    prev_stream_seq: prev,
    snapshot: {
      version: EDGE_AGENT_RPC_VERSION,
      status: 'ok',
      session_id: sessionId,
      revision: sequence,
      running: false,
      title: 'Benchmark session',
      started_at: new Date(now).toISOString(),
      messages: [
        { role: 'user', text: 'Why does the pager test fail?' },
        { role: 'assistant', text: `${`delta ${sequence} `.repeat(20)} @${now}` },
      ],
    },
    emitted_at: now,
    recorded_at: now,
    // A session's first runtime (the router's fence for a session it has not seen restart).
    fence: 1,
  };
}

/**
 * Publishes every session's chain, all sessions concurrently, each chain in order (a row's
 * `prev_stream_seq` is its predecessor's ack). Every row is checked against the contract first.
 */
export async function publishBacklog(
  nc: NatsConnection,
  subjects: Subjects,
  spec: BacklogSpec,
): Promise<Backlog> {
  const js = jetstream(nc);
  // Sealed like the router's rows (the bench stack runs with the dev journal key), so history
  // pays the same decryption it pays in production.
  const cipher = new JournalCipher(DEV_JOURNAL_KEY);
  const lastStreamSequence = new Map<string, number>();
  const started = performance.now();
  await Promise.all(
    spec.sessionIds.map(async (sessionId) => {
      const epoch = randomBytes(16).toString('hex');
      let prev = 0;
      for (let sequence = 1; sequence <= spec.rowsPerSession; sequence++) {
        const row = journalEntrySchema.parse(entry(spec, sessionId, epoch, sequence, prev));
        const ack = await js.publish(subjects.sessionJournal(sessionId), encodeJson(cipher.seal(row)), {
          msgID: `${sessionId}:${epoch}:${row.revision}`,
          expect: { lastSubjectSequence: prev },
          timeout: PUBLISH_TIMEOUT_MS,
        });
        if (ack.duplicate) throw new Error(`Backlog row ${sessionId}:${sequence} was a duplicate.`);
        prev = ack.seq;
      }
      lastStreamSequence.set(sessionId, prev);
    }),
  );
  return {
    rows: spec.sessionIds.length * spec.rowsPerSession,
    lastStreamSequence,
    publish_s: (performance.now() - started) / 1000,
  };
}
