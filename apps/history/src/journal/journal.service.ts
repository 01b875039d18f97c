import { Injectable, Logger } from '@nestjs/common';
import {
  isSubmissionEntry,
  Limits,
  type EdgeAgentResult,
  type JournalEntry,
  type JournalMessage,
  type JournalSubmissionEntry,
} from '#contracts';
import { Aad, HistoryCipher } from '../common/history-cipher.js';
import { parseEdgeId } from '../common/ids.js';
import type { StoredSessionKey } from '../common/session-rows.js';
import { pageOf, sessionSummary, storedSnapshot } from '../common/stored-session.js';
import { reduce, windowOf, type RenderBody } from './journal-reducer.js';
import type {
  BatchOutcome,
  BatchRow,
  PageWrite,
  SaveOutcome,
  SessionSeal,
  SnapshotFields,
  StructuredRecord,
  SubmissionRecord,
} from './journal-records.js';
import type { CommitPage } from './journal-commit-page.js';
import { JournalRepository, type UnsequencedRecord } from './journal.repository.js';

/** Where a message sits in the stream, as the consumer knows it. */
export interface Delivery {
  streamSequence: number;
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

/** The previous message of this session's subject is not applied yet; nothing was written. */
export class JournalOutOfOrderError extends Error {
  constructor(sessionId: string) {
    super(`Journal row of session ${sessionId} arrived before its predecessor.`);
    this.name = 'JournalOutOfOrderError';
  }
}

export type PersistOutcome = SaveOutcome | 'transient';

/** One message of a session-batch, as the consumer hands it over. */
export interface BatchEntry {
  message: JournalMessage;
  delivery: Delivery;
}

/** An unsequenced snapshot row, prepared for its own write path. */
type Unsequenced = { kind: 'unsequenced'; record: UnsequencedRecord };

/** What became of one message of a session-batch. */
export type BatchEntryOutcome = PersistOutcome | 'out_of_order' | { unstorable: string };

/** One outcome per message, and the pages the commits left (see JournalRepository.saveBatches). */
export interface PersistedBatch {
  outcomes: BatchEntryOutcome[];
  pages: CommitPage[];
}

@Injectable()
export class JournalService {
  private readonly log = new Logger(JournalService.name);

  constructor(
    private readonly journal: JournalRepository,
    private readonly cipher: HistoryCipher,
  ) {}

  /**
   * Stores one message: a batch of one (`persistBatch`). Throws UnstorableEntryError when it can
   * never be stored, JournalOutOfOrderError when its predecessor is not applied yet.
   */
  async persist(message: JournalMessage, delivery: Delivery): Promise<PersistOutcome> {
    const {
      outcomes: [outcome],
    } = await this.persistBatch([{ message, delivery }]);
    if (outcome === 'out_of_order') throw new JournalOutOfOrderError(message.session_id);
    if (typeof outcome === 'object') throw new UnstorableEntryError(outcome.unstorable);
    return outcome ?? 'unchanged';
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
   * nothing). The pages the commits left (one per session-batch that could cut one, in commit
   * order) come back beside the outcomes, for the commit notices.
   */
  async persistBatch(entries: readonly BatchEntry[]): Promise<PersistedBatch> {
    const outcomes: (BatchEntryOutcome | undefined)[] = entries.map(() => undefined);
    const pages: CommitPage[] = [];
    type Run = { key: StoredSessionKey; id: string; rows: BatchRow[]; at: number[] };
    let runs: Run[] = [];
    const flush = async () => {
      if (runs.length === 0) return;
      const pending = runs;
      runs = [];
      const done = await this.journal.saveBatches(
        pending.map((run) => ({
          key: run.key,
          rows: run.rows,
          sealStoredPage: (payload) => this.storedPage(run.key, payload),
        })),
      );
      pages.push(...done.pages);
      pending.forEach((run, index) => {
        const results = done.outcomes[index]!;
        run.at.forEach((entry, position) => (outcomes[entry] = results[position]!));
        this.logNoAccess(results, run.key.sessionId, run.key.accessId);
      });
    };
    for (const [index, { message, delivery }] of entries.entries()) {
      let prepared: { key: StoredSessionKey; row: BatchRow | Unsequenced };
      try {
        // Sessions without a saved access are transient previews; they have no durable history.
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
      if (prepared.row.kind === 'unsequenced') {
        await flush();
        outcomes[index] = await this.journal.saveUnsequenced(prepared.row.record);
        this.logNoAccess([outcomes[index]], prepared.key.sessionId, prepared.key.accessId);
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
    return { outcomes: outcomes.map((outcome) => outcome ?? 'unchanged'), pages };
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

  /** A batch row for a sequenced message; an unsequenced one is stored on its own. */
  private batchRow(
    message: JournalMessage,
    key: StoredSessionKey,
    delivery: Delivery,
  ): BatchRow | Unsequenced {
    if (isSubmissionEntry(message)) {
      return { kind: 'submission', record: this.submissionRecord(message, key, delivery) };
    }
    if (message.sequence === undefined) {
      return { kind: 'unsequenced', record: this.unsequenced(message, key) };
    }
    const { fields, journalPayload, sealSession } = this.sealedSnapshot(message, key);
    const structured = this.structured(message, message.sequence, key, delivery);
    const sealPage = () => this.sealedPage(key, message.snapshot);
    return { kind: 'snapshot', record: { ...fields, journalPayload, sealSession, sealPage, structured } };
  }

  /** The archived page of a snapshot's window, as that snapshot leaves it. */
  private sealedPage(key: StoredSessionKey, snapshot: EdgeAgentResult): PageWrite {
    const window = windowOf(snapshot);
    return {
      window,
      revision: BigInt(snapshot.revision ?? 0),
      payload: this.cipher.encryptJson(pageOf(snapshot), Aad.page(key, window)),
    };
  }

  /**
   * The page of the window the stored session row shows (its last applied snapshot); null when
   * it does not decrypt — that window then goes unarchived, and the journal still moves on.
   */
  private storedPage(key: StoredSessionKey, payload: Uint8Array<ArrayBuffer>): PageWrite | null {
    try {
      return this.sealedPage(key, this.cipher.decryptJson<EdgeAgentResult>(payload, Aad.payload(key)));
    } catch (error) {
      this.log.warn(
        `Session ${key.sessionId}: stored snapshot unreadable, window not archived: ${(error as Error).message}`,
      );
      return null;
    }
  }

  /** A row written before the router sequenced rows (see JournalRepository.saveUnsequenced). */
  private unsequenced(entry: JournalEntry, key: StoredSessionKey): UnsequencedRecord {
    const { fields, journalPayload, sealSession } = this.sealedSnapshot(entry, key);
    return { ...fields, ...sealSession(), journalPayload };
  }

  private logNoAccess(outcomes: readonly BatchOutcome[], sessionId: string, accessId: string): void {
    if (outcomes.includes('no_access')) {
      this.log.debug(`Session ${sessionId} rows not stored: access ${accessId} is gone.`);
    }
  }

  /** A router-written submission row: sequenced, so it only ever arrives with its delivery. */
  private submissionRecord(
    entry: JournalSubmissionEntry,
    key: StoredSessionKey,
    delivery: Delivery,
  ): SubmissionRecord {
    return {
      key,
      epoch: entry.epoch,
      revision: BigInt(entry.revision),
      recordedAt: new Date(entry.recorded_at),
      position: {
        sequence: BigInt(entry.sequence),
        streamSequence: BigInt(delivery.streamSequence),
        prevStreamSequence: BigInt(entry.prev_stream_seq),
        force: delivery.force,
        fence: entry.fence,
      },
      submission: entry.submission,
    };
  }

  /**
   * What a snapshot row states about its session, its journal row's ciphertext, and how to seal
   * the session row's (called only for a row that ends up on the session row).
   */
  private sealedSnapshot(
    entry: JournalEntry,
    key: StoredSessionKey,
  ): { fields: SnapshotFields; journalPayload: Uint8Array<ArrayBuffer>; sealSession: () => SessionSeal } {
    const { plaintext, revision } = this.checkedSnapshot(entry);
    const snapshot = entry.snapshot;
    return {
      fields: {
        key,
        epoch: entry.epoch,
        revision,
        running: snapshot.running ?? false,
        closed: snapshot.closed ?? false,
        status: snapshot.status,
        recordedAt: new Date(entry.recorded_at),
      },
      journalPayload: this.cipher.encrypt(plaintext, Aad.journal(key, entry.epoch, revision)),
      sealSession: () => ({
        payload: this.cipher.encrypt(plaintext, Aad.payload(key)),
        summary: this.cipher.encryptJson(sessionSummary(snapshot), Aad.summary(key)),
      }),
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
    sequence: number,
    key: StoredSessionKey,
    delivery: Delivery,
  ): StructuredRecord {
    const digest = (itemId: string, body: RenderBody) =>
      this.cipher.digest(JSON.stringify(body), Aad.item(key, itemId));
    return {
      sequence: BigInt(sequence),
      streamSequence: BigInt(delivery.streamSequence),
      prevStreamSequence: BigInt(entry.prev_stream_seq ?? 0),
      window: windowOf(entry.snapshot),
      force: delivery.force,
      ...(entry.fence === undefined ? {} : { fence: entry.fence }),
      plan: (stored) => {
        const reduction = reduce(stored, entry.snapshot, digest);
        return {
          upserts: reduction.upserts.map((change) => {
            const text = JSON.stringify(change.body);
            return {
              itemId: change.itemId,
              revision: change.revision,
              ordinal: change.ordinal,
              created: change.created,
              body: this.cipher.encrypt(text, Aad.item(key, change.itemId)),
              plain: { value: change.body, bytes: Buffer.byteLength(text) },
              digest: reduction.digests.get(change.itemId) ?? digest(change.itemId, change.body),
            };
          }),
          tombstones: reduction.tombstones,
        };
      },
    };
  }
}

function keyId(key: StoredSessionKey): string {
  return `${key.ownerId}\u0000${key.accessId}\u0000${key.edgeId}\u0000${key.sessionId}`;
}
