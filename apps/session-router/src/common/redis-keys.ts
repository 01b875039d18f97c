// Every Redis key of the router, in one place. Per-session keys carry the session id in a hash
// tag so all of a session's keys land in one Redis Cluster slot (docs/architecture.md "Names").
/** Shards of the lease index; changing it strands entries, so it is a constant, not a setting. */
export const LEASE_INDEX_SHARDS = 16;

export class RedisKeys {
  constructor(private readonly namespace: string) {}

  revision(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:rev`;
  }
  epoch(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:epoch`;
  }
  /** The journal sequence of the session's last row (inside the epoch): a cache of the stream. */
  sequence(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:seq`;
  }
  /** The stream sequence of the session's last journal message: the expected-last-subject-sequence. */
  streamSequence(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:jsseq`;
  }
  /** The stream sequence of the session's last edge-update row (submission rows may follow it). */
  edgeStreamSequence(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:edgejsseq`;
  }
  /** Held by the one writer appending to the session's journal now (JournalAppendLock). */
  appendLock(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:append`;
  }
  meta(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:meta`;
  }
  /** The session's title override, cached from history so live replies can carry it. */
  titleOverride(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:title`;
  }
  /**
   * Set when the session was deleted with saved history: a send is refused without history and
   * the edge's copy is deleted again (an edge offline at the delete still holds it).
   */
  deleted(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:deleted`;
  }
  /** The session's runtime fence: a counter bumped each time its runtime is (re)started. */
  fence(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:fence`;
  }
  /** One mutation's ledger record (docs/contract.md "Idempotent mutations"). */
  operation(sessionId: string, operationId: string): string {
    return `${this.namespace}:{${sessionId}}:op:${operationId}`;
  }
  /**
   * Sorted set of the session's live operation ids scored by their expiry: the capacity count.
   * Per session (not per caller) so the admission script touches one cluster slot.
   */
  operations(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:ops`;
  }
  /** Which replica's sweep or reconciler handles an operation's submission now (short-lived). */
  operationMark(sessionId: string, operationId: string, purpose: string): string {
    return `${this.namespace}:{${sessionId}}:opmark:${purpose}:${operationId}`;
  }
  /** Held by the one replica running a round of the submission sweep and reconciler. */
  submissionRound(): string {
    return `${this.namespace}:submission-round`;
  }
  /** A prompt's resolution, written by the compare-and-set before the edge is asked. */
  prompt(sessionId: string, kind: 'approval' | 'input', promptId: string): string {
    return `${this.namespace}:{${sessionId}}:prompt:${kind}:${promptId}`;
  }
  lease(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:lease`;
  }
  /**
   * One shard of the lease index: a sorted set of session ids scored by the ms timestamp their
   * lease is due. The index is split in LEASE_INDEX_SHARDS sets, each with its own hash tag, so
   * on a Redis Cluster the reaper's load and the index's memory spread over the masters instead
   * of one slot; a session always lands in the same shard (`leaseShard`).
   */
  leases(shard: number): string {
    return `${this.namespace}:leases:{${shard}}`;
  }
  /** The shard of a session's entry in the lease index. */
  leaseShard(sessionId: string): number {
    // FNV-1a: stable across processes and versions, cheap, and spreads hex ids evenly.
    let hash = 0x811c9dc5;
    for (let index = 0; index < sessionId.length; index += 1) {
      hash = Math.imul(hash ^ sessionId.charCodeAt(index), 0x01000193) >>> 0;
    }
    return hash % LEASE_INDEX_SHARDS;
  }
  /** The single lease index of versions before the sharding; the reaper drains it into the shards. */
  legacyLeases(): string {
    return `${this.namespace}:leases`;
  }
  presence(edgeId: string): string {
    return `${this.namespace}:edge:${edgeId}:presence`;
  }
  /** When (router clock, ms) the edge was last seen to restart (a heartbeat with a new boot id). */
  restarted(edgeId: string): string {
    return `${this.namespace}:edge:${edgeId}:restarted`;
  }
}
