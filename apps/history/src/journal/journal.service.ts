import { Injectable, Logger } from '@nestjs/common';
import { Limits, type JournalEntry } from '#contracts';
import { Aad, HistoryCipher } from '../common/history-cipher.js';
import { parseEdgeId } from '../common/ids.js';
import { sessionSummary, storedSnapshot } from '../common/stored-session.js';
import { reduce, windowOf, type RenderBody } from './journal-reducer.js';
import { JournalRepository, type SaveOutcome, type StructuredRecord } from './journal.repository.js';

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

@Injectable()
export class JournalService {
  private readonly logger = new Logger(JournalService.name);

  constructor(
    private readonly journal: JournalRepository,
    private readonly cipher: HistoryCipher,
  ) {}

  async persist(entry: JournalEntry, delivery?: Delivery): Promise<PersistOutcome> {
    // Sessions without a saved access are transient previews; they have no durable history.
    if (entry.access_id === undefined || entry.access_id === '') return 'transient';
    const edgeId = parseEdgeId(entry.edge_id);
    if (edgeId === null)
      throw new UnstorableEntryError(`edge_id of session ${entry.session_id} is not a connector id`);
    if (!Number.isSafeInteger(entry.revision) || entry.revision < 1) {
      throw new UnstorableEntryError(`revision of session ${entry.session_id} is not a positive integer`);
    }
    if (!Number.isFinite(entry.recorded_at)) {
      throw new UnstorableEntryError(`recorded_at of session ${entry.session_id} is not a timestamp`);
    }
    const snapshot = entry.snapshot;
    const key = { ownerId: entry.actor_id, accessId: entry.access_id, edgeId, sessionId: entry.session_id };
    const revision = BigInt(entry.revision);
    const plaintext = JSON.stringify(storedSnapshot(snapshot));
    if (Buffer.byteLength(plaintext) > Limits.STORED_PAYLOAD_MAX_BYTES) {
      throw new UnstorableEntryError(
        `snapshot of session ${entry.session_id} exceeds the stored payload bound`,
      );
    }
    const structured = delivery ? this.structured(entry, key, delivery) : undefined;
    const outcome = await this.journal.save({
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
    });
    if (outcome === 'no_access') {
      this.logger.debug(
        `Session ${entry.session_id} revision ${entry.revision} not stored: access ${entry.access_id} is gone.`,
      );
    }
    return outcome;
  }

  /** The reduced-state part of an entry that carries a router-assigned sequence. */
  private structured(
    entry: JournalEntry,
    key: { ownerId: string; accessId: string; edgeId: bigint; sessionId: string },
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
