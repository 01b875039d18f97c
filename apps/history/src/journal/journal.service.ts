import { Injectable, Logger } from '@nestjs/common';
import type { EdgeAgentResult, JournalEntry } from '#contracts';
import { parseEdgeId } from '../common/ids.js';
import { JournalRepository, type SaveOutcome } from './journal.repository.js';

/**
 * Snapshot fields that describe the live process or the asking client rather than the
 * session's history (reference §4 "Save rules"); never stored.
 */
const LIVE_ONLY_FIELDS = [
  'models',
  'approvals',
  'input_requests',
  'permissions_available',
  'skills',
  'sessions',
  'directories',
  'history_persistent',
  'archived',
] as const satisfies readonly (keyof EdgeAgentResult)[];

/** An entry no redelivery can fix: terminate it instead of retrying. */
export class UnstorableEntryError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'UnstorableEntryError';
  }
}

export type PersistOutcome = SaveOutcome | 'transient';

export function storedSnapshot(snapshot: EdgeAgentResult): Record<string, unknown> {
  const stored: Record<string, unknown> = { ...snapshot };
  for (const field of LIVE_ONLY_FIELDS) delete stored[field];
  return stored;
}

@Injectable()
export class JournalService {
  private readonly logger = new Logger(JournalService.name);

  constructor(private readonly journal: JournalRepository) {}

  async persist(entry: JournalEntry): Promise<PersistOutcome> {
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
    const outcome = await this.journal.save({
      ownerId: entry.actor_id,
      accessId: entry.access_id,
      edgeId,
      sessionId: entry.session_id,
      epoch: entry.epoch,
      revision: BigInt(entry.revision),
      payload: storedSnapshot(snapshot),
      title: snapshot.title ?? '',
      running: snapshot.running ?? false,
      closed: snapshot.closed ?? false,
      status: snapshot.status,
      recordedAt: new Date(entry.recorded_at),
    });
    if (outcome === 'no_access') {
      this.logger.debug(
        `Session ${entry.session_id} revision ${entry.revision} not stored: access ${entry.access_id} is gone.`,
      );
    }
    return outcome;
  }
}
