// Every Redis key of the router, in one place. Per-session keys carry the session id in a hash
// tag so all of a session's keys land in one Redis Cluster slot (ARCHITECTURE.md "Names").
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
  meta(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:meta`;
  }
  /** The session's title override, cached from history so live replies can carry it. */
  titleOverride(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:title`;
  }
  lease(sessionId: string): string {
    return `${this.namespace}:{${sessionId}}:lease`;
  }
  /** Sorted set of session ids scored by the ms timestamp their lease is due. */
  leases(): string {
    return `${this.namespace}:leases`;
  }
  presence(edgeId: string): string {
    return `${this.namespace}:edge:${edgeId}:presence`;
  }
}
