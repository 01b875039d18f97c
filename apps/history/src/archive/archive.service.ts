import { setTimeout } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import {
  Limits,
  type EdgeAgentResult,
  type HistoryArchiveWindowReply,
  type HistoryArchiveWindowRequest,
  type HistoryDeleteReply,
  type HistoryRenameRequest,
  type HistoryResumeSeedReply,
  type HistoryResumeSeedRequest,
  type HistorySessionScope,
  type HistorySnapshotReply,
  type HistoryTranscriptReply,
  type HistoryTranscriptRequest,
} from '#contracts';
import {
  AccessNotFoundError,
  InvalidRequestError,
  JournalNotAppliedError,
  StoredSessionNotFoundError,
} from '../common/errors.js';
import { Aad, HistoryCipher } from '../common/history-cipher.js';
import { parseEdgeId, requireActorId } from '../common/ids.js';
import type { StoredSessionKey } from '../common/session-rows.js';
import {
  archivedView,
  pageOf,
  resumeSeed,
  sessionSummary,
  storedSnapshot,
  transcriptPage,
  type StoredPage,
} from '../common/stored-session.js';
import { ArchiveRepository, type StoredSessionRow } from './archive.repository.js';

/** How long a transcript waits for the journal consumer to reach the router's view of the journal. */
const APPLIED_WAIT_MS = 2_000;
const APPLIED_FIRST_PAUSE_MS = 10;
const APPLIED_MAX_PAUSE_MS = 200;

/** `history_before` absent: the newest archived round (windows are far below this). */
const NEWEST_WINDOW = 2_147_483_647;

/**
 * Stored sessions as the router uses them (reference §2.3 resume, rename, delete, transcript,
 * send windowing; §4 offline behaviour). Every value is decrypted with its row's scope; a value
 * that does not decrypt throws (the router then answers `unavailable`), it is never shown.
 */
@Injectable()
export class ArchiveService {
  private readonly log = new Logger(ArchiveService.name);

  constructor(
    private readonly archive: ArchiveRepository,
    private readonly cipher: HistoryCipher,
  ) {}

  async resumeSeed(request: HistoryResumeSeedRequest): Promise<HistoryResumeSeedReply> {
    const key = this.keyOf(request);
    let row = await this.archive.find(key);
    if (row?.deleted) return { state: 'deleted' };
    // A seed behind the journal would restart the session at a revision the journal holds. A
    // session journaled only by unsequenced (pre-sequencer) rows has no position to wait for.
    if (request.stream_sequence !== undefined) {
      if (!(await this.applied(key, request.stream_sequence, { untracked: true }))) {
        throw new JournalNotAppliedError();
      }
      row = await this.archive.find(key);
    }
    if (!row || !row.payload) return { state: row?.deleted ? 'deleted' : 'missing' };
    if (row.deleted) return { state: 'deleted' };
    const { stored, titleOverride } = this.open(key, row);
    return { state: 'stored', resume: resumeSeed(stored, titleOverride) };
  }

  async snapshot(request: HistorySessionScope): Promise<HistorySnapshotReply> {
    const key = this.keyOf(request);
    return this.viewOf(key, await this.archive.find(key));
  }

  async archiveWindow(request: HistoryArchiveWindowRequest): Promise<HistoryArchiveWindowReply> {
    const key = this.keyOf(request);
    const { snapshot } = request;
    if (snapshot.session_id !== request.session_id) {
      throw new InvalidRequestError('snapshot.session_id does not match session_id.');
    }
    const revision = snapshot.revision ?? 0;
    const window = snapshot.window ?? 0;
    if (!Number.isSafeInteger(revision) || revision < 1 || !Number.isInteger(window) || window < 0) {
      throw new InvalidRequestError('snapshot revision and window must be counts.');
    }
    if (window >= NEWEST_WINDOW) throw new InvalidRequestError('snapshot window is out of range.');
    const payload = JSON.stringify(storedSnapshot(snapshot));
    if (Buffer.byteLength(payload) > Limits.STORED_PAYLOAD_MAX_BYTES) {
      throw new InvalidRequestError('snapshot exceeds the stored payload bound.');
    }
    const outcome = await this.archive.archiveWindow(
      key,
      {
        revision: BigInt(revision),
        payload: this.cipher.encrypt(payload, Aad.payload(key)),
        summary: this.cipher.encryptJson(sessionSummary(snapshot), Aad.summary(key)),
        running: snapshot.running ?? false,
        closed: snapshot.closed ?? false,
        status: snapshot.status,
      },
      { window, payload: this.cipher.encryptJson(pageOf(snapshot), Aad.page(key, window)) },
    );
    if (outcome === 'no_access') throw new AccessNotFoundError();
    if (outcome === 'deleted') throw new StoredSessionNotFoundError();
    this.log.debug(`Session ${request.session_id} window ${window} archived (new: ${outcome.created}).`);
    return { window, created: outcome.created };
  }

  async rename(request: HistoryRenameRequest): Promise<HistorySnapshotReply> {
    const key = this.keyOf(request);
    const title = request.title.trim();
    const row = await this.archive.rename(key, this.cipher.encrypt(title, Aad.title(key)));
    return typeof row === 'string' ? { state: row } : this.viewOf(key, row);
  }

  async delete(request: HistorySessionScope): Promise<HistoryDeleteReply> {
    const key = this.keyOf(request);
    const before = await this.archive.tombstone(key);
    if (before === 'no_access') throw new AccessNotFoundError();
    this.log.log(`Session ${request.session_id} of actor ${key.ownerId} tombstoned.`);
    return { state: before };
  }

  async transcript(request: HistoryTranscriptRequest): Promise<HistoryTranscriptReply> {
    const key = this.keyOf(request);
    // Past the bound the answer is what history holds: a lagging history must not turn paging
    // into an error.
    if (
      request.stream_sequence !== undefined &&
      !(await this.applied(key, request.stream_sequence, { untracked: false }))
    ) {
      this.log.warn(`Transcript of ${key.sessionId} answered before history applied its journal.`);
    }
    const before = request.before ?? NEWEST_WINDOW;
    const found = await this.archive.findPageBefore(key, Math.min(before, NEWEST_WINDOW));
    if (!found) return {};
    const page = this.cipher.decryptJson<StoredPage>(found.payload, Aad.page(key, found.window));
    // The session may have been deleted, or the access revoked, while the page was read.
    if (!(await this.archive.isReadable(key))) return {};
    return { page: transcriptPage({ ...page, window: found.window }) };
  }

  /**
   * Waits, bounded, until the journal consumer applied the session's row at `streamSequence`
   * (false when it has not by then): a finished round's page is written with the next round's
   * first row, which the client may have seen live before history applied it, and a resume
   * seeds from the session row the journal last updated. `untracked`: the answer when history
   * has applied no sequenced row of the session at all.
   */
  private async applied(
    key: StoredSessionKey,
    streamSequence: number,
    { untracked }: { untracked: boolean },
  ): Promise<boolean> {
    const target = BigInt(streamSequence);
    const deadline = Date.now() + APPLIED_WAIT_MS;
    for (let pause = APPLIED_FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, APPLIED_MAX_PAUSE_MS)) {
      const applied = await this.archive.appliedStreamSequence(key);
      if (applied === null && untracked) return true;
      if ((applied ?? 0n) >= target) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await setTimeout(Math.min(pause, left));
    }
  }

  private viewOf(key: StoredSessionKey, row: StoredSessionRow | null): HistorySnapshotReply {
    if (!row) return { state: 'missing' };
    if (row.deleted || !row.payload) return { state: row.deleted ? 'deleted' : 'missing' };
    const { stored, titleOverride } = this.open(key, row);
    return { state: 'stored', snapshot: archivedView(stored, titleOverride) };
  }

  private open(
    key: StoredSessionKey,
    row: StoredSessionRow,
  ): { stored: EdgeAgentResult; titleOverride: string | null } {
    const stored = this.cipher.decryptJson<EdgeAgentResult>(
      row.payload ?? new Uint8Array(),
      Aad.payload(key),
    );
    const titleOverride = row.titleOverride ? this.cipher.decrypt(row.titleOverride, Aad.title(key)) : null;
    return { stored, titleOverride };
  }

  private keyOf(scope: HistorySessionScope): StoredSessionKey {
    const edgeId = parseEdgeId(scope.edge_id);
    if (edgeId === null) throw new InvalidRequestError('edge_id is not a connector id.');
    return {
      ownerId: requireActorId(scope.actor_id),
      accessId: scope.access_id,
      edgeId,
      sessionId: scope.session_id,
    };
  }
}
