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
import type { JournalService } from './journal.service.js';

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

export type RepairOutcome =
  /** Every row before the given one is applied (or given up on): it applies normally now. */
  | 'ready'
  /** Its predecessor is gone for good and nothing is left to apply before it: apply it as a gap. */
  | 'gap'
  /** The hole is longer than one repair reads: left to redelivery. */
  | 'too_far';

export class JournalChainRepair {
  constructor(
    private readonly sources: ChainSources,
    private readonly journal: JournalService,
    private readonly chain: JournalChainRepository,
  ) {}

  /**
   * Applies the rows missing between the session's applied head and `entry`. Transient failures
   * (database, NATS) throw, and the caller retries `entry` later as before.
   */
  async fill(entry: JournalMessage): Promise<RepairOutcome> {
    if (entry.prev_stream_seq === undefined) return 'ready';
    const applied = await this.chain.lastApplied(entry.session_id);
    const hole = await this.walkBack(entry.session_id, entry.prev_stream_seq, applied);
    if (hole === 'too_far') return 'too_far';
    let gap = hole.gap;
    // Oldest first; the rows were read once already, but holding them all could cost megabytes.
    for (const seq of hole.missing.reverse()) {
      gap = !(await this.applyOne(seq, gap));
    }
    return gap ? 'gap' : 'ready';
  }

  /** The stream sequences of the missing rows, newest first, and whether the oldest has a gap. */
  private async walkBack(
    sessionId: string,
    from: number,
    applied: number,
  ): Promise<{ missing: number[]; gap: boolean } | 'too_far'> {
    const missing: number[] = [];
    let cursor = from;
    while (cursor > applied) {
      if (missing.length === REPAIR_HOPS_MAX) return 'too_far';
      const message = await this.readable(cursor);
      // A link to another session's row cannot be the router's: the chain ends there.
      if (message === null || message.session_id !== sessionId) return { missing, gap: true };
      missing.push(cursor);
      cursor = message.prev_stream_seq ?? 0;
    }
    // The chain is linear, so it meets the applied head exactly unless a row lacks its link.
    return { missing, gap: cursor !== applied };
  }

  /** Applies one missing row (as a gap when `gap`); false when it can never be stored. */
  private async applyOne(seq: number, gap: boolean): Promise<boolean> {
    const message = await this.readable(seq);
    if (message === null) return false;
    try {
      await this.journal.persist(message, { streamSequence: seq, force: gap });
      return true;
    } catch (error) {
      if (this.sources.isPermanent(error)) return false;
      throw error;
    }
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
