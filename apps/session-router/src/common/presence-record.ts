// What the router stores about an edge's presence, and the pure rules that read it: how long a
// heartbeat keeps an edge online, and when a missing or leaving record means offline.
import { Limits, type EdgeHeartbeat } from '#contracts';

export interface PresenceRecord {
  device: string;
  agent_kinds: string[];
  installations: number;
  live_sessions: number;
  max_sessions: number;
  /** When the router recorded the heartbeat (its own clock: edges' clocks are not trusted). */
  seen_at: number;
  /** How long this record keeps the edge online; also the key's expiry. */
  ttl_ms: number;
  /** The edge said it is shutting down: offline now, whatever the expiry. */
  leaving?: boolean;
  /** The edge process's boot id (its heartbeats' EDGE_BOOT_ID_HEADER); a new one means it restarted. */
  boot_id?: string;
}

/** 2 of the edge's announced heartbeat intervals; the old fixed TTL for edges that announce none. */
export function presenceTtlMs(heartbeat: Pick<EdgeHeartbeat, 'interval_ms'>): number {
  if (heartbeat.interval_ms === undefined) return Limits.EDGE_PRESENCE_TTL_MS;
  return Math.ceil(heartbeat.interval_ms * Limits.EDGE_OFFLINE_AFTER_HEARTBEATS);
}

/** A stored record, or null when absent or unreadable (an unreadable record proves nothing). */
export function parsePresence(raw: string | null): PresenceRecord | null {
  if (raw === null) return null;
  try {
    const value = JSON.parse(raw) as Partial<PresenceRecord>;
    if (typeof value.seen_at !== 'number') return null;
    return {
      device: typeof value.device === 'string' ? value.device : '',
      agent_kinds: Array.isArray(value.agent_kinds) ? value.agent_kinds : [],
      installations: typeof value.installations === 'number' ? value.installations : 0,
      live_sessions: typeof value.live_sessions === 'number' ? value.live_sessions : 0,
      max_sessions: typeof value.max_sessions === 'number' ? value.max_sessions : 0,
      seen_at: value.seen_at,
      ttl_ms: typeof value.ttl_ms === 'number' ? value.ttl_ms : Limits.EDGE_PRESENCE_TTL_MS,
      ...(value.leaving === true ? { leaving: true } : {}),
      ...(typeof value.boot_id === 'string' ? { boot_id: value.boot_id } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * Whether a heartbeat's record shows the edge restarted since the record it replaces: both name a
 * boot id and they differ. An edge seen for the first time, or one that predates boot ids, did
 * not (as far as anyone can tell).
 */
export function restartedSince(previous: PresenceRecord | null, next: PresenceRecord): boolean {
  return previous?.boot_id !== undefined && next.boot_id !== undefined && previous.boot_id !== next.boot_id;
}

/**
 * Offline: the edge said it is leaving, or its record is gone and it was last seen longer ago than
 * its grace. A record missing within the grace was lost with Redis, not with the edge: its next
 * heartbeat writes it again.
 */
export function isOffline(
  record: PresenceRecord | null,
  lastSeenAt: number,
  graceMs: number,
  now: number,
): boolean {
  if (record?.leaving) return true;
  if (record) return false;
  return now - lastSeenAt >= graceMs;
}
