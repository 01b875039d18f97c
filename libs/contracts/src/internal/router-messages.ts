// What the api and edges send the router, plus the error reply every internal RPC shares.
import type { EdgeAgentRequest, EdgeAgentResult, Installation } from '../edge-agent.js';
import { ROUTER_HEARTBEAT_INTERVAL_MAX_MS, ROUTER_HEARTBEAT_INTERVAL_MIN_MS } from '../limits.js';

/** Reply of any internal request that failed; the code says how the caller should map it. */
export const RPC_ERROR_CODES = [
  'invalid_request',
  'not_found',
  'connector_not_found',
  'access_not_found',
  'conflict',
  /** A per-actor bound (connectors, accesses) is reached; nothing was created. */
  'limit_reached',
  'unavailable',
  'internal',
] as const;
export type RpcErrorCode = (typeof RPC_ERROR_CODES)[number];
export interface RpcError {
  error: { code: RpcErrorCode; message: string };
}
export function isRpcError(value: unknown): value is RpcError {
  return typeof value === 'object' && value !== null && 'error' in value;
}

/** api → router: an action the api has authenticated and authorized. */
export interface RouterEdgeAgentRequest {
  actor_id: string;
  request: EdgeAgentRequest;
  /** The saved access's project when `request.access_id` is set. */
  project_root?: string;
}

/** edge → router: the state of one session after a change. Retried by the edge until acked. */
export interface SessionUpdate {
  edge_id: string;
  /** Proves the sender is the enrolled edge (see edge-credentials.ts). */
  edge_token: string;
  actor_id: string;
  access_id?: string;
  session_id: string;
  /** The edge's display revision; strictly increasing per session. */
  revision: number;
  /** The full snapshot as the edge would answer `snapshot`. */
  snapshot: EdgeAgentResult;
  /** Edge wall clock (ms since epoch) when the change happened, for latency measurements. */
  emitted_at: number;
}
export interface SessionUpdateAck {
  ok: true;
  /** The journal position the update was stored at (or was already stored at). */
  epoch: string;
  sequence: number;
  duplicate: boolean;
}

/** Core NATS fan-out between router replicas: wake watchers of this session. */
export interface RevisionNotice {
  session_id: string;
  revision: number;
}

/** edge → routers every `interval_ms` (EDGE_HEARTBEAT_INTERVAL_MS by default). */
export interface EdgeHeartbeat {
  edge_id: string;
  edge_token: string;
  device: string;
  agent_kinds: string[];
  installations: Installation[];
  live_sessions: number;
  max_sessions: number;
  sent_at: number;
  /** How often this edge sends a heartbeat; absent from edges that predate it. */
  interval_ms?: number;
  /** The edge is shutting down: count it offline now rather than when its heartbeats stop. */
  leaving?: boolean;
}

/**
 * The NATS header of every edge heartbeat that carries the edge process's boot id: random per
 * process, so a new one means the edge restarted and whatever its old process was asked will
 * never be answered. A header and not a field: routers of earlier releases decode heartbeats
 * strictly and would refuse one with a field they do not know, while they ignore headers.
 */
export const EDGE_BOOT_ID_HEADER = 'Tether-Boot-Id';

const BOOT_ID_PATTERN = /^[0-9a-f-]{8,64}$/;

/** The boot id a heartbeat's header names, or undefined when it has none or not a valid one. */
export function bootIdOf(header: string | undefined): string | undefined {
  return header !== undefined && BOOT_ID_PATTERN.test(header) ? header : undefined;
}

export interface PresenceRequest {
  edge_ids: string[];
}
export interface PresenceReply {
  online: string[];
}

/**
 * router → api replicas (core NATS, not stored): one router replica is alive and keeps this
 * interval. `leaving` is its last heartbeat, sent on shutdown once its in-flight requests were
 * answered, so nobody mistakes a clean exit for a death.
 */
export interface RouterHeartbeat {
  /** Random per process, never reused. */
  instance: string;
  interval_ms: number;
  leaving?: boolean;
}

const ROUTER_INSTANCE_PATTERN = /^[0-9a-f]{8,64}$/;

/** The heartbeat, or null when the message is not one (a foreign or garbled message is ignored). */
export function parseRouterHeartbeat(value: unknown): RouterHeartbeat | null {
  if (typeof value !== 'object' || value === null) return null;
  const { instance, interval_ms: interval, leaving } = value as Record<string, unknown>;
  if (typeof instance !== 'string' || !ROUTER_INSTANCE_PATTERN.test(instance)) return null;
  if (
    typeof interval !== 'number' ||
    !Number.isInteger(interval) ||
    interval < ROUTER_HEARTBEAT_INTERVAL_MIN_MS ||
    interval > ROUTER_HEARTBEAT_INTERVAL_MAX_MS
  ) {
    return null;
  }
  if (leaving !== undefined && typeof leaving !== 'boolean') return null;
  return { instance, interval_ms: interval, ...(leaving ? { leaving } : {}) };
}
