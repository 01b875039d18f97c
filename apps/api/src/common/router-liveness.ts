// Which router replicas are alive, from their heartbeats (pure: the caller passes the clock).
// NATS never tells a requester that the process which took its request died, so an api replica
// that lost one finds out here, and sends again what that replica may have held
// (router-replicas.ts).
import { Limits, type RouterHeartbeat } from '#contracts';

/**
 * Far more router replicas than any deployment runs: only the router identity may publish
 * heartbeats, and past this a flood of made-up instances is ignored instead of growing the map.
 */
export const ROUTER_REPLICAS_MAX = 256;

interface Seen {
  /** When its last heartbeat arrived, or when our own connection came back, the later. */
  since: number;
  intervalMs: number;
}

export class RouterLiveness {
  private readonly replicas = new Map<string, Seen>();

  /**
   * Records a heartbeat; a `leaving` one forgets the replica (a clean exit is not a loss). A new
   * replica past ROUTER_REPLICAS_MAX is not tracked (its loss then sends nothing again).
   */
  heard(heartbeat: RouterHeartbeat, now: number): void {
    const { instance } = heartbeat;
    if (heartbeat.leaving) this.replicas.delete(instance);
    else if (this.replicas.has(instance) || this.replicas.size < ROUTER_REPLICAS_MAX) {
      this.replicas.set(instance, { since: now, intervalMs: heartbeat.interval_ms });
    }
  }

  /**
   * Our own connection was cut: heartbeats sent meanwhile never reached us, so silence up to
   * now proves nothing about any replica. Each one's silence is counted again from now.
   */
  reconnected(now: number): void {
    for (const seen of this.replicas.values()) seen.since = Math.max(seen.since, now);
  }

  /** The replicas silent for ROUTER_LOST_AFTER_HEARTBEATS of their intervals, now forgotten. */
  lost(now: number): string[] {
    const lost: string[] = [];
    for (const [instance, seen] of this.replicas) {
      if (now - seen.since > Limits.ROUTER_LOST_AFTER_HEARTBEATS * seen.intervalMs) lost.push(instance);
    }
    for (const instance of lost) this.replicas.delete(instance);
    return lost;
  }

  /** How many replicas are known alive. */
  get size(): number {
    return this.replicas.size;
  }
}
