// Who may publish and subscribe to what on NATS: one identity per service, one per edge and a
// read-only subscriber role (docs/security.md "Identities and permissions"). Every list is built
// from `Subjects`, so a renamed subject changes the permission with it; docs/security.md shows
// the same lists for the default namespace and a test holds the two together.
import type { RequestName, Subjects } from './subjects.js';

/** The identities of a deployment; an edge is one identity per enrolled connector. */
export const SERVICE_IDENTITIES = ['api', 'session-router', 'history', 'subscriber'] as const;
export type ServiceIdentity = (typeof SERVICE_IDENTITIES)[number];
export type NatsIdentity = ServiceIdentity | 'edge';

/** What one identity may do; an empty deny list means nothing beyond the allow list is denied. */
export interface NatsPermissions {
  publish: { allow: string[]; deny: string[] };
  subscribe: { allow: string[]; deny: string[] };
  /**
   * Replies to requests the identity received (NATS `allow_responses`): at most `max` messages
   * per request within `ttlMs`. Null: the identity answers nobody.
   */
  responses: { max: number; ttlMs: number } | null;
}

/**
 * How long a responder may take to answer one request: above the longest request timeout of
 * any caller (the api's router timeout, limits.ts API_ROUTER_TIMEOUT_MS is 40 s), with margin.
 */
export const RESPONSE_PERMISSION_TTL_MS = 60_000;

/** Which requests each service may make; the responder is the service the subject names. */
const API_REQUESTS: readonly RequestName[] = [
  'routerEdgeAgent',
  'routerPresence',
  'historyAuthorize',
  'historyAccessList',
  'historyAccessCreate',
  'historyAccessUpdate',
  'historyAccessDelete',
  'historyConnectorList',
  'historyConnectorEnroll',
  'historyConnectorRotate',
  'historyConnectorDelete',
  'historyJournalPage',
];
const ROUTER_REQUESTS: readonly RequestName[] = [
  'historyResumeSeed',
  'historySnapshot',
  // Only routers of the previous release send it (rolling upgrades); drop it with that release.
  'historyArchiveWindow',
  'historyRename',
  'historyDelete',
  'historyTranscript',
  'historySessions',
  'historyOpenSubmissions',
  'historyEdgeCredential',
];
const ROUTER_SERVES: readonly RequestName[] = ['routerEdgeAgent', 'routerPresence'];

/**
 * Each identity's reply inbox: its own, so no identity can read the replies meant for another
 * (an edge's answer carries prompts and agent output). Every connection of an identity sets
 * it as the client's `inboxPrefix`.
 */
export function inboxPrefix(subjects: Subjects, identity: NatsIdentity, edgeId?: string): string {
  if (identity === 'edge') {
    if (!edgeId) throw new Error('An edge inbox needs the edge id.');
    return `_INBOX.${subjects.namespace}.edge.${edgeId}`;
  }
  return `_INBOX.${subjects.namespace}.${identity}`;
}

/** The JetStream API subjects one stream's manager needs (look up, create, update). */
function manageStream(stream: string): string[] {
  return [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.CREATE.${stream}`,
    `$JS.API.STREAM.UPDATE.${stream}`,
  ];
}

/**
 * What a pull consumer on its own durable needs: create/update it (the client names the filter
 * in the subject when the consumer has one), read it, pull and ack.
 */
function pullDurable(stream: string, durable: string, filter: string): string[] {
  return [
    `$JS.API.CONSUMER.CREATE.${stream}.${durable}`,
    `$JS.API.CONSUMER.CREATE.${stream}.${durable}.${filter}`,
    `$JS.API.CONSUMER.INFO.${stream}.${durable}`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`,
    `$JS.ACK.${stream}.${durable}.>`,
  ];
}

/** The account-wide JetStream look-up every JetStream client makes first; it reveals no data. */
const JS_ACCOUNT_INFO = '$JS.API.INFO';

function requestsOf(subjects: Subjects, names: readonly RequestName[]): string[] {
  return names.map((name) => subjects.requests[name]);
}

/** The history service's own request subjects: everything under `<ns>.history.` it answers. */
function historyServes(subjects: Subjects): string[] {
  return (Object.keys(subjects.requests) as RequestName[])
    .filter((name) => name.startsWith('history'))
    .map((name) => subjects.requests[name]);
}

export function apiPermissions(subjects: Subjects): NatsPermissions {
  return {
    publish: {
      allow: [
        ...requestsOf(subjects, API_REQUESTS),
        subjects.auditRecords,
        JS_ACCOUNT_INFO,
        ...manageStream(subjects.auditStream),
      ],
      deny: [],
    },
    subscribe: {
      allow: [
        subjects.grantsChanged,
        subjects.routerHeartbeat,
        subjects.sessionJournalNotice('*'),
        subjects.lifecycleWildcard,
        `${inboxPrefix(subjects, 'api')}.>`,
      ],
      deny: [],
    },
    responses: null,
  };
}

export function routerPermissions(subjects: Subjects): NatsPermissions {
  return {
    publish: {
      allow: [
        subjects.edgeRpcWildcard,
        subjects.routerHeartbeat,
        subjects.revisionWildcard,
        subjects.titleChangedWildcard,
        subjects.journalWildcard,
        subjects.lifecycleWildcard,
        ...requestsOf(subjects, ROUTER_REQUESTS),
        JS_ACCOUNT_INFO,
        ...manageStream(subjects.sessionsStream),
        `$JS.API.STREAM.MSG.GET.${subjects.sessionsStream}`,
        `$JS.API.DIRECT.GET.${subjects.sessionsStream}.>`,
      ],
      deny: [],
    },
    subscribe: {
      allow: [
        ...requestsOf(subjects, ROUTER_SERVES),
        subjects.sessionUpdateWildcard,
        subjects.edgeHeartbeat,
        subjects.revisionWildcard,
        subjects.titleChangedWildcard,
        subjects.edgeCredentialsChanged,
        `${inboxPrefix(subjects, 'session-router')}.>`,
      ],
      deny: [],
    },
    responses: { max: 1, ttlMs: RESPONSE_PERMISSION_TTL_MS },
  };
}

export function historyPermissions(subjects: Subjects): NatsPermissions {
  return {
    publish: {
      allow: [
        subjects.grantsChanged,
        subjects.edgeCredentialsChanged,
        subjects.sessionJournalNotice('*'),
        JS_ACCOUNT_INFO,
        ...manageStream(subjects.sessionsStream),
        ...manageStream(subjects.auditStream),
        // Reads a journal row a dead replica held, to fill the hole before its successor.
        `$JS.API.STREAM.MSG.GET.${subjects.sessionsStream}`,
        ...pullDurable(subjects.sessionsStream, subjects.historyJournalConsumer, subjects.journalWildcard),
        ...pullDurable(subjects.auditStream, subjects.historyAuditConsumer, subjects.auditRecords),
      ],
      deny: [],
    },
    subscribe: {
      allow: [...historyServes(subjects), `${inboxPrefix(subjects, 'history')}.>`],
      deny: [],
    },
    responses: { max: 1, ttlMs: RESPONSE_PERMISSION_TTL_MS },
  };
}

/**
 * One edge: its own RPC subject in, its own heartbeats and session updates out, and one reply
 * per RPC it received. Nothing else: not another edge's subjects, not a session's journal.
 */
export function edgePermissions(subjects: Subjects, edgeId: string): NatsPermissions {
  return {
    publish: { allow: [subjects.edgeHeartbeatOf(edgeId), subjects.sessionUpdateOf(edgeId)], deny: [] },
    subscribe: {
      allow: [subjects.edgeRpc(edgeId), `${inboxPrefix(subjects, 'edge', edgeId)}.>`],
      deny: [],
    },
    responses: { max: 1, ttlMs: RESPONSE_PERMISSION_TTL_MS },
  };
}

/**
 * The read-only role for internal services that follow sessions (docs/events.md): lifecycle
 * events only, live (core NATS) or through a durable pull consumer of its own whose filter is
 * the lifecycle subjects (the filter is part of the create subject, so no other filter passes).
 * It publishes nothing of Tether's; its only publishes are the JetStream API calls that create,
 * read, pull and ack such a consumer. The services' own durables are out of its reach.
 */
export function subscriberPermissions(subjects: Subjects): NatsPermissions {
  const stream = subjects.sessionsStream;
  const serviceDurables = [subjects.historyJournalConsumer];
  return {
    publish: {
      allow: [
        JS_ACCOUNT_INFO,
        `$JS.API.STREAM.INFO.${stream}`,
        `$JS.API.CONSUMER.CREATE.${stream}.*.${subjects.lifecycleWildcard}`,
        `$JS.API.CONSUMER.INFO.${stream}.*`,
        `$JS.API.CONSUMER.MSG.NEXT.${stream}.*`,
        `$JS.ACK.${stream}.*.>`,
      ],
      deny: serviceDurables.flatMap((durable) => [
        `$JS.API.CONSUMER.CREATE.${stream}.${durable}.>`,
        `$JS.API.CONSUMER.INFO.${stream}.${durable}`,
        `$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`,
        `$JS.ACK.${stream}.${durable}.>`,
      ]),
    },
    subscribe: {
      allow: [subjects.lifecycleWildcard, `${inboxPrefix(subjects, 'subscriber')}.>`],
      deny: [],
    },
    responses: null,
  };
}

export function servicePermissions(subjects: Subjects, identity: ServiceIdentity): NatsPermissions {
  switch (identity) {
    case 'api':
      return apiPermissions(subjects);
    case 'session-router':
      return routerPermissions(subjects);
    case 'history':
      return historyPermissions(subjects);
    case 'subscriber':
      return subscriberPermissions(subjects);
  }
}

/**
 * The permissions of one identity as the Markdown block docs/security.md shows (for the default
 * namespace); a test compares the document with this.
 */
export function permissionsMarkdown(permissions: NatsPermissions): string {
  const list = (items: string[]) => (items.length ? items.map((item) => `\`${item}\``).join(', ') : '—');
  const lines = [
    `- publish: ${list(permissions.publish.allow)}`,
    ...(permissions.publish.deny.length ? [`- publish denied: ${list(permissions.publish.deny)}`] : []),
    `- subscribe: ${list(permissions.subscribe.allow)}`,
    ...(permissions.subscribe.deny.length ? [`- subscribe denied: ${list(permissions.subscribe.deny)}`] : []),
    `- replies: ${
      permissions.responses
        ? `${permissions.responses.max} per request received, within ${permissions.responses.ttlMs / 1000} s`
        : 'none'
    }`,
  ];
  return lines.join('\n');
}
