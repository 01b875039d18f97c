// Calls to history about what an actor owns (accesses, connectors, credentials), not sessions.
import type { AgentAccess } from '../edge-agent.js';

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
/** One page of the actor's connectors, oldest first; `after` is the last id of the page before. */
export interface ConnectorListRequest {
  actor_id: string;
  after?: string;
  /** 1..CONNECTORS_LIST_MAX; CONNECTORS_LIST_MAX when absent. */
  limit?: number;
}
export interface ConnectorListReply {
  connectors: ConnectorRecord[];
  /** Set when more connectors follow: the `after` of the next page. */
  next_after?: string;
}
export interface ConnectorEnrollRequest {
  actor_id: string;
  name: string;
  device?: string;
}
/** A connector's credentials, minted at enrollment and again at every rotation. */
export interface ConnectorEnrollReply {
  connector: ConnectorRecord;
  edge_token: string;
  /**
   * The edge's own NATS user as a `.creds` file (JWT and seed), when the deployment runs NATS
   * with decentralised auth (docs/security.md); absent on an open development NATS.
   */
  nats_creds?: string;
}
/** api → history: new credentials for one of the actor's connectors; the old ones stop working. */
export interface ConnectorRotateRequest {
  actor_id: string;
  edge_id: string;
}
/** api → history: delete one of the actor's connectors and revoke its credentials. */
export interface ConnectorDeleteRequest {
  actor_id: string;
  edge_id: string;
}
export interface ConnectorDeleteReply {
  connector: ConnectorRecord;
}
/** router → history: which token generation an edge holds now (connector_not_found: none). */
export interface EdgeCredentialRequest {
  edge_id: string;
}
export interface EdgeCredentialReply {
  generation: number;
}
