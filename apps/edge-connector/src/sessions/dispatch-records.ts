// What this edge did with each send that named a dispatch id (the send's client_operation_id,
// set by the router): the edge's half of "never send twice" and the reconciler's strong match
// (reference orca §4 crash-boundary reconciliation, §9.4). A second send of a recorded id answers
// the recorded outcome instead of starting another turn, so the router may dispatch an `unknown`
// submission again on the client's explicit `retry_unknown` without risking a duplicate.
//
// Kept in memory and, when the edge has a data folder, appended to a file there without fsync
// (dispatch-record-log.ts), so a restarted edge process still knows them. Records a crash of the
// machine lost answer `absent`, which proves nothing, so those submissions stay `unknown` (never
// re-sent by the router, never shown as failed), exactly as the reference treats a history it
// cannot trust.
import { Limits, type EdgeDispatchRecord } from '#contracts';
import type { DispatchRecordLog, LoggedDispatch } from './dispatch-record-log.js';

/** Records per session at most (the router's ledger admits no more live operations per session). */
export const DISPATCH_RECORDS_PER_SESSION = 512;
/** Records in all: about 200 bytes each, so a few MiB at most. */
export const DISPATCH_RECORDS_MAX = 16_384;

/** A record and when it expires (the file holds the same). */
type StoredRecord = LoggedDispatch;

export type RecordedDispatch = Omit<StoredRecord, 'expiresAt'>;

export class DispatchRecords {
  /** Insertion-ordered, so the first entries are the oldest. */
  private readonly records = new Map<string, StoredRecord>();
  private readonly perSession = new Map<string, number>();

  constructor(
    private readonly now: () => number = Date.now,
    /** As long as the router's ledger may replay the id (24 h + 5 min). */
    private readonly retentionMs: number = Limits.OPERATION_RETENTION_MS,
    /** Where the records outlive this process; none: memory only. */
    private readonly log?: DispatchRecordLog,
  ) {
    if (!log) return;
    // An earlier process's records, under the same bounds as if they had been made here.
    for (const record of log.load()) this.insert(record);
    this.compactLog();
  }

  get size(): number {
    return this.records.size;
  }

  /** The record of `id` in `session`, if this edge holds one for this owner. */
  find(owner: string, session: string, id: string): RecordedDispatch | undefined {
    const record = this.records.get(key(session, id));
    if (!record || record.owner !== owner) return undefined;
    if (record.expiresAt <= this.now()) {
      this.remove(record);
      return undefined;
    }
    const { expiresAt: _expires, ...recorded } = record;
    return recorded;
  }

  /** The reconciler's view: what became of `id`, or `absent`. */
  describe(owner: string, session: string, id: string): EdgeDispatchRecord {
    const record = this.find(owner, session, id);
    if (!record) return { state: 'absent' };
    return {
      state: record.state,
      ...(record.status ? { status: record.status } : {}),
      ...(record.itemId ? { item_id: record.itemId } : {}),
    };
  }

  /** The first outcome of an id is its outcome: a later one never overwrites it. */
  record(dispatch: RecordedDispatch): void {
    const stored = { ...dispatch, expiresAt: this.now() + this.retentionMs };
    if (!this.insert(stored) || !this.log) return;
    this.log.append(stored);
    this.compactLog();
  }

  /** Adds a record within the bounds; false when the id already has one (or it expired). */
  private insert(record: StoredRecord): boolean {
    const id = key(record.session, record.id);
    if (this.records.has(id)) return false;
    this.prune();
    if (record.expiresAt <= this.now()) return false;
    if ((this.perSession.get(record.session) ?? 0) >= DISPATCH_RECORDS_PER_SESSION) {
      this.evictOldestOf(record.session);
    }
    if (this.records.size >= DISPATCH_RECORDS_MAX) {
      const oldest = this.records.values().next().value;
      if (oldest) this.remove(oldest);
    }
    this.records.set(id, record);
    this.perSession.set(record.session, (this.perSession.get(record.session) ?? 0) + 1);
    return true;
  }

  /** Rewrites the file with the live records once it holds twice as many lines as there are. */
  private compactLog(): void {
    if (this.log && this.log.appended > 2 * Math.max(this.records.size, DISPATCH_RECORDS_PER_SESSION)) {
      this.log.rewrite([...this.records.values()]);
    }
  }

  /** Lets go of the file (the records stay in memory). */
  close(): void {
    this.log?.close();
  }

  /** Drops expired records from the front (insertion order is expiry order). */
  private prune(): void {
    const now = this.now();
    for (const record of this.records.values()) {
      if (record.expiresAt > now) break;
      this.remove(record);
    }
  }

  private evictOldestOf(session: string): void {
    for (const record of this.records.values()) {
      if (record.session === session) {
        this.remove(record);
        return;
      }
    }
  }

  private remove(record: StoredRecord): void {
    if (!this.records.delete(key(record.session, record.id))) return;
    const left = (this.perSession.get(record.session) ?? 1) - 1;
    if (left > 0) this.perSession.set(record.session, left);
    else this.perSession.delete(record.session);
  }
}

/** NUL never occurs in a session id or an operation id, so no pair can forge another's key. */
function key(session: string, id: string): string {
  return `${session}\u0000${id}`;
}
