import { Injectable, Logger } from '@nestjs/common';
import {
  isSubmissionEntry,
  Limits,
  type JournalEntry,
  type JournalMessage,
  type JournalSubmissionEntry,
} from '#contracts';
import { Aad, HistoryCipher } from '../common/history-cipher.js';
import { parseEdgeId } from '../common/ids.js';
import type { StoredSessionKey } from '../common/session-rows.js';
import { sessionSummary, storedSnapshot } from '../common/stored-session.js';
import { reduce, windowOf, type RenderBody } from './journal-reducer.js';
import {
  JournalRepository,
  type BatchOutcome,
  type BatchRow,
  type JournalRecord,
  type SaveOutcome,
  type StructuredRecord,
  type SubmissionRecord,
} from './journal.repository.js';

/** Where a message sits in the stream, as the consumer knows it. */
export interface Delivery {
  streamSeq: number;
  /** Apply even if the previous message of the subject never got applied. */
  force: boolean;
}

/** An entry no redelivery can fix: terminate it instead of retrying. */
export class UnstorableEntryError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'UnstorableEntryError';
  }
}

export type PersistOutcome = SaveOutcome | 'transient';

/** One message of a session-batch, as the consumer hands it over. */
export interface BatchEntry {
  message: JournalMessage;
  delivery: Delivery;
}

/** What became of one message of a session-batch. */
export type BatchEntryOutcome = PersistOutcome | 'out_of_order' | { unstorable: string };

@Injectable()
export class JournalService {
  private readonly logger = new Logger(JournalService.name);

  constructor(
    private readonly journal: JournalRepository,
    private readonly cipher: HistoryCipher,
  ) {}

  async persist(message: JournalMessage, delivery?: Delivery): Promise<PersistOutcome> {
    // Sessions without a saved access are transient previews; they have no durable history.
    const key = this.keyOf(message);
    if (key === null) return 'transient';
    const outcome = isSubmissionEntry(message)
      ? await this.persistSubmission(message, key, delivery)
      : await this.persistEntry(message, key, delivery);
    if (outcome === 'no_access') {
      this.logger.debug(
        `Session ${message.session_id} revision ${message.revision} not stored: access ${message.access_id} is gone.`,
      );
    }
    return outcome;
  }

  /**
   * Stores the messages the consumer took together (one or several sessions' subjects, each in
   * stream order): consecutive sequenced rows of one key form a run, and the runs go out
   * together, every session's in one transaction (JournalRepository.saveBatches). A transaction
   * holds one run per session, so a second run of a session already in it (another key, or
   * rows not adjacent) starts the next transaction; an unsequenced row, which takes no turn in
   * the chain, is stored on its own, after the runs before it. Returns one outcome per entry,
   * in the order given; throws when a transaction failed (the caller retries message by
   * message; the transactions before it stay committed, and a redelivery of their rows changes
   * nothing).
   */
  async persistBatch(entries: readonly BatchEntry[]): Promise<BatchEntryOutcome[]> {
    const outcomes: (BatchEntryOutcome | undefined)[] = entries.map(() => undefined);
    type Run = { key: StoredSessionKey; id: string; rows: BatchRow[]; at: number[] };
    let runs: Run[] = [];
    const flush = async () => {
      if (runs.length === 0) return;
      const pending = runs;
      runs = [];
      const done = await this.journal.saveBatches(pending.map((run) => ({ key: run.key, rows: run.rows })));
      pending.forEach((run, index) => {
        const results = done[index]!;
        run.at.forEach((entry, position) => (outcomes[entry] = results[position]!));
        this.logNoAccess(results, run.key.sessionId, run.key.accessId);
      });
    };
    for (const [index, { message, delivery }] of entries.entries()) {
      let prepared: { key: StoredSessionKey; row: BatchRow | null };
      try {
        const key = this.keyOf(message);
        if (key === null) {
          outcomes[index] = 'transient';
          continue;
        }
        prepared = { key, row: this.batchRow(message, key, delivery) };
      } catch (error) {
        if (!(error instanceof UnstorableEntryError)) throw error;
        outcomes[index] = { unstorable: error.message };
        continue;
      }
      if (prepared.row === null) {
        await flush();
        outcomes[index] = await this.persist(message, delivery);
        continue;
      }
      const id = keyId(prepared.key);
      let run = runs.at(-1);
      if (run?.id !== id) {
        if (runs.some((other) => other.key.sessionId === prepared.key.sessionId)) await flush();
        run = { key: prepared.key, id, rows: [], at: [] };
        runs.push(run);
      }
      run.rows.push(prepared.row);
      run.at.push(index);
    }
    await flush();
    return outcomes.map((outcome) => outcome ?? 'unchanged');
  }

  /** The stored session a message belongs to; null for a transient preview (no saved access). */
  private keyOf(message: JournalMessage): StoredSessionKey | null {
    if (message.access_id === undefined || message.access_id === '') return null;
    const edgeId = parseEdgeId(message.edge_id);
    if (edgeId === null)
      throw new UnstorableEntryError(`edge_id of session ${message.session_id} is not a connector id`);
    if (!Number.isSafeInteger(message.revision) || message.revision < 1) {
      throw new UnstorableEntryError(`revision of session ${message.session_id} is not a positive integer`);
    }
    if (!Number.isFinite(message.recorded_at)) {
      throw new UnstorableEntryError(`recorded_at of session ${message.session_id} is not a timestamp`);
    }
    return { ownerId: message.actor_id, accessId: message.access_id, edgeId, sessionId: message.session_id };
  }

  /** A batch row for a sequenced message; null for an unsequenced one (stored on its own). */
  private batchRow(message: JournalMessage, key: StoredSessionKey, delivery: Delivery): BatchRow | null {
    if (isSubmissionEntry(message)) {
      return { kind: 'submission', record: this.submissionRecord(message, key, delivery) };
    }
    if (message.sequence === undefined) return null;
    const { plaintext, revision } = this.checkedSnapshot(message);
    const snapshot = message.snapshot;
    return {
      kind: 'snapshot',
      record: {
        key,
        epoch: message.epoch,
        revision,
        journalPayload: this.cipher.encrypt(plaintext, Aad.journal(key, message.epoch, revision)),
        sealSession: () => ({
          payload: this.cipher.encrypt(plaintext, Aad.payload(key)),
          summary: this.cipher.encryptJson(sessionSummary(snapshot), Aad.summary(key)),
        }),
        running: snapshot.running ?? false,
        closed: snapshot.closed ?? false,
        status: snapshot.status,
        recordedAt: new Date(message.recorded_at),
        structured: this.structured(message, key, delivery)!,
      },
    };
  }

  private logNoAccess(outcomes: readonly BatchOutcome[], sessionId: string, accessId: string): void {
    if (outcomes.includes('no_access')) {
      this.logger.debug(`Session ${sessionId} rows not stored: access ${accessId} is gone.`);
    }
  }

  /** A router-written submission row: sequenced, so it only ever arrives with its delivery. */
  private persistSubmission(
    entry: JournalSubmissionEntry,
    key: StoredSessionKey,
    delivery: Delivery | undefined,
  ): Promise<SaveOutcome> {
    return this.journal.saveSubmission(this.submissionRecord(entry, key, delivery));
  }

  private submissionRecord(
    entry: JournalSubmissionEntry,
    key: StoredSessionKey,
    delivery: Delivery | undefined,
  ): SubmissionRecord {
    if (!delivery) throw new UnstorableEntryError('a submission row is stored only from the journal stream');
    return {
      key,
      epoch: entry.epoch,
      revision: BigInt(entry.revision),
      recordedAt: new Date(entry.recorded_at),
      position: {
        sequence: BigInt(entry.sequence),
        streamSeq: BigInt(delivery.streamSeq),
        prevStreamSeq: BigInt(entry.prev_stream_seq),
        force: delivery.force,
        fence: entry.fence,
      },
      submission: entry.submission,
    };
  }

  private persistEntry(
    entry: JournalEntry,
    key: StoredSessionKey,
    delivery: Delivery | undefined,
  ): Promise<SaveOutcome> {
    return this.journal.save(this.entryRecord(entry, key, delivery));
  }

  /** Validates and encrypts a snapshot row (UnstorableEntryError when it can never be stored). */
  private entryRecord(
    entry: JournalEntry,
    key: StoredSessionKey,
    delivery: Delivery | undefined,
  ): JournalRecord {
    const snapshot = entry.snapshot;
    const { plaintext, revision } = this.checkedSnapshot(entry);
    const structured = delivery ? this.structured(entry, key, delivery) : undefined;
    return {
      key,
      epoch: entry.epoch,
      revision,
      payload: this.cipher.encrypt(plaintext, Aad.payload(key)),
      journalPayload: this.cipher.encrypt(plaintext, Aad.journal(key, entry.epoch, revision)),
      summary: this.cipher.encryptJson(sessionSummary(snapshot), Aad.summary(key)),
      running: snapshot.running ?? false,
      closed: snapshot.closed ?? false,
      status: snapshot.status,
      recordedAt: new Date(entry.recorded_at),
      ...(structured ? { structured } : {}),
    };
  }

  /** The stored form of an entry's snapshot, within the stored payload bound. */
  private checkedSnapshot(entry: JournalEntry): { plaintext: string; revision: bigint } {
    const plaintext = JSON.stringify(storedSnapshot(entry.snapshot));
    if (Buffer.byteLength(plaintext) > Limits.STORED_PAYLOAD_MAX_BYTES) {
      throw new UnstorableEntryError(
        `snapshot of session ${entry.session_id} exceeds the stored payload bound`,
      );
    }
    return { plaintext, revision: BigInt(entry.revision) };
  }

  /** The reduced-state part of an entry that carries a router-assigned sequence. */
  private structured(
    entry: JournalEntry,
    key: StoredSessionKey,
    delivery: Delivery,
  ): StructuredRecord | undefined {
    if (entry.sequence === undefined) return undefined;
    const digest = (itemId: string, body: RenderBody) =>
      this.cipher.digest(JSON.stringify(body), Aad.item(key, itemId));
    return {
      sequence: BigInt(entry.sequence),
      streamSeq: BigInt(delivery.streamSeq),
      prevStreamSeq: BigInt(entry.prev_stream_seq ?? 0),
      window: windowOf(entry.snapshot),
      force: delivery.force,
      ...(entry.fence === undefined ? {} : { fence: entry.fence }),
      plan: (stored) => {
        const reduction = reduce(stored, entry.snapshot, digest);
        return {
          upserts: reduction.upserts.map((change) => ({
            itemId: change.itemId,
            revision: change.revision,
            ordinal: change.ordinal,
            created: change.created,
            body: this.cipher.encryptJson(change.body, Aad.item(key, change.itemId)),
            digest: reduction.digests.get(change.itemId) ?? digest(change.itemId, change.body),
          })),
          tombstones: reduction.tombstones,
        };
      },
    };
  }
}

function keyId(key: StoredSessionKey): string {
  return `${key.ownerId}\u0000${key.accessId}\u0000${key.edgeId}\u0000${key.sessionId}`;
}
