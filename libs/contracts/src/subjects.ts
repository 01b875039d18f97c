// NATS subject names and the payload each one carries (docs/architecture.md "Names").
// Requests are `tether.<service>.<verb>`; queue groups are named after the service.
import type { EdgeAgentResult, EdgeAgentRPCRequest } from './edge-agent.js';
import type {
  AccessCreateRequest,
  AccessDeleteRequest,
  AccessListReply,
  AccessListRequest,
  AccessReply,
  AccessUpdateRequest,
  AuthorizeReply,
  AuthorizeRequest,
  ConnectorEnrollReply,
  ConnectorEnrollRequest,
  ConnectorRotateRequest,
  ConnectorDeleteRequest,
  ConnectorDeleteReply,
  EdgeCredentialRequest,
  EdgeCredentialReply,
  ConnectorListReply,
  ConnectorListRequest,
  EdgeHeartbeat,
  HistoryArchiveWindowReply,
  HistoryArchiveWindowRequest,
  HistoryDeleteReply,
  HistoryDeleteRequest,
  HistoryRenameReply,
  HistoryRenameRequest,
  HistoryResumeSeedReply,
  HistoryResumeSeedRequest,
  HistorySessionsReply,
  HistorySessionsRequest,
  HistorySnapshotReply,
  HistorySnapshotRequest,
  HistoryTranscriptReply,
  HistoryTranscriptRequest,
  HistoryJournalPageReply,
  HistoryJournalPageRequest,
  HistoryOpenSubmissionsReply,
  HistoryOpenSubmissionsRequest,
  JournalNotice,
  AuditRecord,
  PresenceReply,
  PresenceRequest,
  RouterEdgeAgentRequest,
  SessionUpdate,
  SessionUpdateAck,
  RpcError,
  JournalEntry,
  RevisionNotice,
} from './internal.js';

export const QUEUE_GROUPS = {
  router: 'session-router',
  history: 'history',
} as const;

/** The namespace every subject, stream and Redis key starts with; tests use their own. */
export const DEFAULT_NAMESPACE = 'tether';
/** A namespace: lowercase, starting with a letter, at most 32 characters (a NATS subject token). */
export const NAMESPACE_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/** Request/reply verbs: `<ns>.<service>.<verb>`. Keys are the names used in code. */
const REQUEST_VERBS = {
  /** api → router: one edge_agent action, already authorized by the api. */
  routerEdgeAgent: 'router.edge-agent',
  /** api → router: which edges are online. */
  routerPresence: 'router.presence',
  /**
   * edge → router: a session changed; acked once the journal holds it. Each edge publishes on its
   * own subject below this one (`<ns>.router.session-update.<edgeId>`, see `sessionUpdateOf`), so
   * a NATS permission can hold an edge to its own id.
   */
  routerSessionUpdate: 'router.session-update',
  /** api/router → history. */
  historyAuthorize: 'history.authorize',
  historyAccessList: 'history.access-list',
  historyAccessCreate: 'history.access-create',
  historyAccessUpdate: 'history.access-update',
  historyAccessDelete: 'history.access-delete',
  historyConnectorList: 'history.connector-list',
  historyConnectorEnroll: 'history.connector-enroll',
  historyConnectorRotate: 'history.connector-rotate',
  historyConnectorDelete: 'history.connector-delete',
  /** router → history: an edge's current token generation (checked on heartbeats and updates). */
  historyEdgeCredential: 'history.edge-credential',
  historySessions: 'history.sessions',
  /** router → history: stored sessions (resume seed, offline view, windows, rename, delete, transcript). */
  historyResumeSeed: 'history.resume-seed',
  historySnapshot: 'history.snapshot',
  historyArchiveWindow: 'history.archive-window',
  historyRename: 'history.rename',
  historyDelete: 'history.delete',
  historyTranscript: 'history.transcript',
  /** api → history: one page of a session's structured journal (tail, before, after). */
  historyJournalPage: 'history.journal-page',
  /** router → history: open submissions across stored sessions (crash-boundary sweep, reconciler). */
  historyOpenSubmissions: 'history.open-submissions',
} as const;
export type RequestName = keyof typeof REQUEST_VERBS;

/** Every subject and stream name of one namespace (docs/architecture.md "Names"). */
export class Subjects {
  readonly requests: { readonly [K in RequestName]: string };
  /**
   * edge → routers (plain publish, queue group): presence, installations, capacity. This is the
   * wildcard the routers subscribe to; each edge publishes on its own `edgeHeartbeatOf(id)`.
   */
  readonly edgeHeartbeat: string;
  /** What the routers subscribe to for session updates: every edge's `sessionUpdateOf(id)`. */
  readonly sessionUpdateWildcard: string;
  /** Every edge's RPC subject (only the router may publish here). */
  readonly edgeRpcWildcard: string;
  /** Core NATS, router replicas → api replicas: `RouterHeartbeat`. Not stored. */
  readonly routerHeartbeat: string;
  /**
   * Core NATS, history → router replicas: an edge's credentials were rotated or revoked; cached
   * token generations of that edge are dropped. Not stored.
   */
  readonly edgeCredentialsChanged: string;
  readonly revisionWildcard: string;
  /** Core NATS between router replicas: a session's title override changed. Not stored. */
  readonly titleChangedWildcard: string;
  readonly journalWildcard: string;
  readonly lifecycleWildcard: string;
  /** JetStream stream holding every session's journal and lifecycle events. */
  readonly sessionsStream: string;
  /** The history service's durable consumer of the journal. */
  readonly historyJournalConsumer = 'history-journal';
  /** api → history (JetStream): one audit record per mutating edge_agent action. */
  readonly auditRecords: string;
  /** JetStream stream holding audit records until history stored them. */
  readonly auditStream: string;
  /** The history service's durable consumer of audit records. */
  readonly historyAuditConsumer = 'history-audit';
  /**
   * Core NATS, history → api replicas: an actor's grants changed (an access updated or deleted,
   * a connector enrolled); cached authorization decisions of that actor are dropped. Not stored.
   */
  readonly grantsChanged: string;

  constructor(readonly namespace: string = DEFAULT_NAMESPACE) {
    if (!NAMESPACE_PATTERN.test(namespace)) {
      throw new Error(`Invalid subject namespace ${JSON.stringify(namespace)}.`);
    }
    const requests = {} as Record<RequestName, string>;
    for (const [name, verb] of Object.entries(REQUEST_VERBS)) {
      requests[name as RequestName] = `${namespace}.${verb}`;
    }
    this.requests = requests;
    this.edgeHeartbeat = `${namespace}.edge.*.heartbeat`;
    this.sessionUpdateWildcard = `${this.requests.routerSessionUpdate}.*`;
    this.edgeRpcWildcard = `${namespace}.edge.*.rpc`;
    this.routerHeartbeat = `${namespace}.router.heartbeat`;
    this.edgeCredentialsChanged = `${namespace}.history.edge-credentials-changed`;
    this.revisionWildcard = `${namespace}.session.*.rev`;
    this.titleChangedWildcard = `${namespace}.session.*.title`;
    this.journalWildcard = `${namespace}.session.*.journal`;
    this.lifecycleWildcard = `${namespace}.session.*.lifecycle`;
    this.sessionsStream = `${namespace.toUpperCase().replace(/-/g, '_')}_SESSIONS`;
    this.auditRecords = `${namespace}.audit.edge-agent`;
    this.auditStream = `${namespace.toUpperCase().replace(/-/g, '_')}_AUDIT`;
    this.grantsChanged = `${namespace}.history.grants-changed`;
  }

  /** `<ns>.edge.<edgeId>.rpc`: router → one edge, carrying edge_agent_v1. */
  edgeRpc(edgeId: string): string {
    return `${this.namespace}.edge.${edgeId}.rpc`;
  }
  /** `<ns>.edge.<edgeId>.heartbeat`: one edge's heartbeats. */
  edgeHeartbeatOf(edgeId: string): string {
    return `${this.namespace}.edge.${edgeId}.heartbeat`;
  }
  /** `<ns>.router.session-update.<edgeId>`: one edge's session updates (request/reply). */
  sessionUpdateOf(edgeId: string): string {
    return `${this.requests.routerSessionUpdate}.${edgeId}`;
  }
  /**
   * The edge id a per-edge subject names (`edgeHeartbeatOf`, `sessionUpdateOf`, `edgeRpc`), or
   * null. NATS permissions hold each edge to its own subjects, so this id is who published.
   */
  edgeIdOfSubject(subject: string): string | null {
    const prefix = `${this.requests.routerSessionUpdate}.`;
    if (subject.startsWith(prefix)) {
      const id = subject.slice(prefix.length);
      return id && !id.includes('.') ? id : null;
    }
    const parts = subject.split('.');
    return parts.length === 4 && parts[0] === this.namespace && parts[1] === 'edge'
      ? (parts[2] ?? null)
      : null;
  }
  /**
   * The subject a request goes to: the service's own subject, except a session update, which
   * goes to the publishing edge's own subject.
   */
  requestSubject<N extends RequestName>(name: N, payload: RequestOf<N>): string {
    if (name === 'routerSessionUpdate') {
      return this.sessionUpdateOf((payload as RequestOf<'routerSessionUpdate'>).edge_id);
    }
    return this.requests[name];
  }
  /** Durable journal of one session (stored in the sessions stream). */
  sessionJournal(sessionId: string): string {
    return `${this.namespace}.session.${sessionId}.journal`;
  }
  /** Durable lifecycle events of one session (stored in the sessions stream). */
  sessionLifecycle(sessionId: string): string {
    return `${this.namespace}.session.${sessionId}.lifecycle`;
  }
  /** Core-NATS fan-out between router replicas: a session's revision moved. Not stored. */
  sessionRevision(sessionId: string): string {
    return `${this.namespace}.session.${sessionId}.rev`;
  }
  /**
   * Core-NATS fan-out between router replicas: the session's title override was set or cleared;
   * each replica drops its cached copy. Not stored.
   */
  sessionTitleChanged(sessionId: string): string {
    return `${this.namespace}.session.${sessionId}.title`;
  }
  /** Core NATS, history → subscribers: the session's journal committed a row. Not stored. */
  sessionJournalNotice(sessionId: string): string {
    return `${this.namespace}.session.${sessionId}.committed`;
  }
  /** The session id inside a session subject, or null. */
  sessionIdOf(subject: string): string | null {
    const parts = subject.split('.');
    return parts.length === 4 && parts[1] === 'session' ? (parts[2] ?? null) : null;
  }
}

/** Request subject → [request payload, reply payload]. Replies may also be an RpcError. */
export interface RequestMap {
  routerEdgeAgent: [RouterEdgeAgentRequest, EdgeAgentResult];
  routerPresence: [PresenceRequest, PresenceReply];
  routerSessionUpdate: [SessionUpdate, SessionUpdateAck];
  historyAuthorize: [AuthorizeRequest, AuthorizeReply];
  historyAccessList: [AccessListRequest, AccessListReply];
  historyAccessCreate: [AccessCreateRequest, AccessReply];
  historyAccessUpdate: [AccessUpdateRequest, AccessReply];
  historyAccessDelete: [AccessDeleteRequest, AccessReply];
  historyConnectorList: [ConnectorListRequest, ConnectorListReply];
  historyConnectorEnroll: [ConnectorEnrollRequest, ConnectorEnrollReply];
  historyConnectorRotate: [ConnectorRotateRequest, ConnectorEnrollReply];
  historyConnectorDelete: [ConnectorDeleteRequest, ConnectorDeleteReply];
  historyEdgeCredential: [EdgeCredentialRequest, EdgeCredentialReply];
  historySessions: [HistorySessionsRequest, HistorySessionsReply];
  historyResumeSeed: [HistoryResumeSeedRequest, HistoryResumeSeedReply];
  historySnapshot: [HistorySnapshotRequest, HistorySnapshotReply];
  historyArchiveWindow: [HistoryArchiveWindowRequest, HistoryArchiveWindowReply];
  historyRename: [HistoryRenameRequest, HistoryRenameReply];
  historyDelete: [HistoryDeleteRequest, HistoryDeleteReply];
  historyTranscript: [HistoryTranscriptRequest, HistoryTranscriptReply];
  historyJournalPage: [HistoryJournalPageRequest, HistoryJournalPageReply];
  historyOpenSubmissions: [HistoryOpenSubmissionsRequest, HistoryOpenSubmissionsReply];
}
export type RequestOf<N extends RequestName> = RequestMap[N][0];
export type ReplyOf<N extends RequestName> = RequestMap[N][1] | RpcError;
export type HeartbeatPayload = EdgeHeartbeat;
export type EdgeRpcPayload = [EdgeAgentRPCRequest, EdgeAgentResult];
export type JournalPayload = JournalEntry;
export type RevisionPayload = RevisionNotice;
export type AuditPayload = AuditRecord;
export type JournalNoticePayload = JournalNotice;
/** The payload of `grantsChanged`: whose grants changed (the actor's whole cache is dropped). */
export interface GrantsChangedNotice {
  actor_id: string;
}
/** The payload of `edgeCredentialsChanged`: whose credentials changed. */
export interface EdgeCredentialsChangedNotice {
  edge_id: string;
}
