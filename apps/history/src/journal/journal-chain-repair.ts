// Fills the hole before a journal row whose predecessor on its subject is not applied yet, by
// reading the missing rows from the sessions stream itself and applying them first, oldest first.
//
// Why: the durable consumer hands each message to one replica at a time. A replica that dies
// holding a message gets it redelivered only after the ack wait (30 s), while the rows published
// after it reach the live replicas at once and find their predecessor missing. Waiting for the
// redelivery stalls the session's history for the ack wait; giving up on the predecessor (applying
// the later row as a gap) lost it for good: its redelivery then sits below the applied head and
// changes nothing — a settled send stayed `pending` forever that way. The router chains every row
// of a subject to the one before it (`prev_stream_seq`, enforced by the publish's expected last
// subject sequence) and the stream keeps them until its retention drops them, so the hole is read
// from there. Only a row the stream no longer holds, or one that can never be stored, becomes a
// gap. Applying a row twice (its late redelivery, another replica) changes nothing.
import type { JournalMessage } from '#contracts';
import type { JournalChainRepository } from './journal-chain.repository.js';
import { JournalOutOfOrderError, type BatchEntry, type JournalService } from './journal.service.js';

/** A message as the sessions stream stores it. */
export interface StreamRow {
  seq: number;
  subject: string;
  data: Uint8Array;
}

export interface ChainSources {
  /** The stream's message at `seq`; null when the stream no longer holds it. */
  read(seq: number): Promise<StreamRow | null>;
  /** Parses a row as the consumer does; throws for one that can never be stored. */
  parse(row: StreamRow): JournalMessage;
  /** Whether `error` (from parse or persist) means the row can never be stored. */
  isPermanent(error: unknown): boolean;
}

/**
 * A row whose predecessor on the subject is not applied yet has the hole filled from the stream
 * (JournalChainRepair), which applies it as a gap only when the stream no longer holds the
 * predecessor or it can never be stored. A row without a chain link (`prev_stream_seq`) cannot be
 * repaired: it waits this many deliveries (about 8 s with the doubling delay), then its
 * predecessor is given up on and it applies with a gap, which `after` reads answer with
 * `journal_gap` instead of a silently wrong timeline.
 */
const ORDER_WAIT_DELIVERIES = 6;

/**
 * Whether a row applies even though its predecessor is not applied yet. Never for a chained row:
 * its delivery count also grows while the database is down, and forcing it then (the fault
 * suite's Postgres outage) skipped a predecessor still on its way — whose redelivery then sat
 * below the applied head and was dropped as a duplicate, so a settled send stayed `pending`.
 */
export function forcedByWaiting(
  entry: Pick<JournalMessage, 'prev_stream_seq'>,
  deliveryCount: number,
): boolean {
  return entry.prev_stream_seq === undefined && deliveryCount >= ORDER_WAIT_DELIVERIES;
}

/**
 * The most missing rows one repair reads back. A longer hole (far more rows in flight at a dead
 * replica than its ack-pending bound allows) is left to redelivery, so one repair stays short.
 */
export const REPAIR_HOPS_MAX = 256;
/**
 * Missing rows applied in one transaction. A row a transaction of its own made a repair of a
 * long hole (a database outage leaves many) cost a commit per row; the batch path takes them
 * together at its usual rate.
 */
export const REPAIR_BATCH_MAX = 64;
/** Sessions whose last too-long hole is remembered; the oldest is forgotten beyond it. */
const LONG_HOLES_MAX = 10_000;
/**
 * How long a too-long hole is taken as known without walking it again. Short: it only has to
 * outlast a burst of redeliveries, and a row the stream dropped meanwhile is then found by a walk.
 */
const LONG_HOLE_TTL_MS = 5_000;

/**
 * A walk that gave up: every row from `from` back to (not including) `reached` was read and is
 * not applied, so a row at or after `from` has a longer hole while the applied head is below
 * `reached`.
 */
interface LongHole {
  from: number;
  reached: number;
  at: number;
}

export type RepairOutcome =
  /** Every row before the given one is applied (or given up on): it applies normally now. */
  | 'ready'
  /** Its predecessor is gone for good and nothing is left to apply before it: apply it as a gap. */
  | 'gap'
  /** The hole is longer than one repair reads: left to redelivery. */
  | 'too_far';

export class JournalChainRepair {
  /**
   * After a database outage JetStream redelivers the backlog newest first (the oldest rows failed
   * most often and wait the longest), so most rows of a busy session find a hole far longer than
   * one repair reads. Walking each of them back REPAIR_HOPS_MAX rows only to give up made the
   * catch-up after a 30 s Postgres outage take minutes; the first walk's verdict now stands for
   * the rows after it.
   */
  private readonly longHoles = new Map<string, LongHole>();

  constructor(
    private readonly sources: ChainSources,
    private readonly journal: JournalService,
    private readonly chain: JournalChainRepository,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Applies the rows missing between the session's applied head and `entry`. Transient failures
   * (database, NATS) throw, and the caller retries `entry` later as before.
   */
  async fill(entry: JournalMessage): Promise<RepairOutcome> {
    if (entry.prev_stream_seq === undefined) return 'ready';
    const applied = await this.chain.lastApplied(entry.session_id);
    if (this.knownTooFar(entry.session_id, entry.prev_stream_seq, applied)) return 'too_far';
    const hole = await this.walkBack(entry.session_id, entry.prev_stream_seq, applied);
    if (typeof hole === 'number') {
      this.rememberTooFar(entry.session_id, { from: entry.prev_stream_seq, reached: hole, at: this.now() });
      return 'too_far';
    }
    let gap = hole.gap;
    // Oldest first, a batch at a time: the rows were read once already, but holding them all
    // could cost megabytes.
    const oldestFirst = hole.missing.reverse();
    for (let start = 0; start < oldestFirst.length; start += REPAIR_BATCH_MAX) {
      gap = await this.applyRun(oldestFirst.slice(start, start + REPAIR_BATCH_MAX), gap);
    }
    return gap ? 'gap' : 'ready';
  }

  private knownTooFar(sessionId: string, from: number, applied: number): boolean {
    const hole = this.longHoles.get(sessionId);
    if (!hole) return false;
    if (applied >= hole.reached || this.now() - hole.at > LONG_HOLE_TTL_MS) {
      this.longHoles.delete(sessionId);
      return false;
    }
    return from >= hole.from;
  }

  private rememberTooFar(sessionId: string, hole: LongHole): void {
    this.longHoles.delete(sessionId);
    this.longHoles.set(sessionId, hole);
    if (this.longHoles.size > LONG_HOLES_MAX) {
      const oldest = this.longHoles.keys().next().value;
      if (oldest !== undefined) this.longHoles.delete(oldest);
    }
  }

  /**
   * The stream sequences of the missing rows, newest first, and whether the oldest has a gap; or,
   * when the hole is longer than one repair reads, the (unapplied) row the walk stopped at.
   */
  private async walkBack(
    sessionId: string,
    from: number,
    applied: number,
  ): Promise<{ missing: number[]; gap: boolean } | number> {
    const missing: number[] = [];
    let cursor = from;
    while (cursor > applied) {
      if (missing.length === REPAIR_HOPS_MAX) return cursor;
      const message = await this.readable(cursor);
      // A link to another session's row cannot be the router's: the chain ends there.
      if (message === null || message.session_id !== sessionId) return { missing, gap: true };
      missing.push(cursor);
      cursor = message.prev_stream_seq ?? 0;
    }
    // The chain is linear, so it meets the applied head exactly unless a row lacks its link.
    return { missing, gap: cursor !== applied };
  }

  /**
   * Applies consecutive missing rows, oldest first, in one transaction (the first as a gap when
   * `gap`); a row the stream no longer holds or that can never be stored is skipped, and the row
   * after it applies as a gap. Answers whether the row after the run has a gap.
   */
  private async applyRun(seqs: readonly number[], gap: boolean): Promise<boolean> {
    const messages = await Promise.all(seqs.map((seq) => this.readable(seq)));
    let entries: BatchEntry[] = [];
    let force = gap;
    messages.forEach((message, index) => {
      if (message === null) {
        force = true;
        return;
      }
      entries.push({ message, delivery: { streamSequence: seqs[index]!, force } });
      force = false;
    });
    // Refused rows end the run there; the rest goes again with its first row as a gap (rows of
    // the first attempt that were stored after all answer `duplicate`).
    while (entries.length > 0) {
      const { outcomes } = await this.journal.persistBatch(entries);
      const refused = outcomes.findIndex((outcome) => typeof outcome === 'object');
      if (refused === -1) {
        if (outcomes.includes('out_of_order'))
          throw new JournalOutOfOrderError(entries[0]!.message.session_id);
        return force;
      }
      const [next, ...rest] = entries.slice(refused + 1);
      if (!next) return true;
      entries = [{ ...next, delivery: { ...next.delivery, force: true } }, ...rest];
    }
    return force;
  }

  /** The parsed row at `seq`; null when the stream no longer holds it or it can never be stored. */
  private async readable(seq: number): Promise<JournalMessage | null> {
    const row = await this.sources.read(seq);
    if (row === null) return null;
    try {
      return this.sources.parse(row);
    } catch (error) {
      if (this.sources.isPermanent(error)) return null;
      throw error;
    }
  }
}
