// Messages between Tether's own services. Never exposed over HTTP.
import type {
  AgentAccess,
  EdgeAgentRequest,
  EdgeAgentResult,
  Installation,
  SessionSummary,
} from './edge-agent.js';

/** Reply of any internal request that failed; the code says how the caller should map it. */
export const RPC_ERROR_CODES = [
  'invalid_request',
  'not_found',
  'connector_not_found',
  'access_not_found',
  'conflict',
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

/** Stored in JetStream on `tether.session.<id>.journal`, consumed by history. */
export interface JournalEntry {
  v: 1;
  session_id: string;
  edge_id: string;
  actor_id: string;
  access_id?: string;
  epoch: string;
  revision: number;
  /** Snapshot with live-only fields removed (approvals, input requests, catalogs). */
  snapshot: EdgeAgentResult;
  emitted_at: number;
  recorded_at: number;
}

/** Core NATS fan-out between router replicas: wake watchers of this session. */
export interface RevisionNotice {
  session_id: string;
  revision: number;
}

/** edge → routers every EDGE_HEARTBEAT_INTERVAL_MS. */
export interface EdgeHeartbeat {
  edge_id: string;
  edge_token: string;
  device: string;
  agent_kinds: string[];
  installations: Installation[];
  live_sessions: number;
  max_sessions: number;
  sent_at: number;
}

export interface PresenceRequest {
  edge_ids: string[];
}
export interface PresenceReply {
  online: string[];
}

/** api → history: is the connector the actor's, and (if named) the access too? */
export interface AuthorizeRequest {
  actor_id: string;
  edge_id: string;
  access_id?: string;
}
export interface AuthorizeReply {
  ok: true;
  access?: AgentAccess;
}

export interface AccessInput {
  name: string;
  kind: string;
  edge_id: string;
  installation_id: string;
  project: string;
}
export interface AccessListRequest {
  actor_id: string;
  page: number;
  page_size: number;
}
export interface AccessListReply {
  items: AgentAccess[];
  total: number;
  page: number;
  page_size: number;
}
export interface AccessCreateRequest {
  actor_id: string;
  access: AccessInput;
}
export interface AccessUpdateRequest {
  actor_id: string;
  id: string;
  access: AccessInput;
}
export interface AccessDeleteRequest {
  actor_id: string;
  id: string;
}
export interface AccessReply {
  access: AgentAccess;
}

export interface ConnectorRecord {
  id: string;
  name: string;
  device?: string;
}
export interface ConnectorListRequest {
  actor_id: string;
}
export interface ConnectorListReply {
  connectors: ConnectorRecord[];
}
export interface ConnectorEnrollRequest {
  actor_id: string;
  name: string;
  device?: string;
}
export interface ConnectorEnrollReply {
  connector: ConnectorRecord;
  edge_token: string;
}

/** router → history: one page of stored sessions for (actor, access, edge). */
export interface HistorySessionsRequest {
  actor_id: string;
  access_id: string;
  edge_id: string;
  page: number;
}
export interface HistorySessionsReply {
  sessions: SessionSummary[];
  total: number;
}
