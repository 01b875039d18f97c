// Every bound of the contract, named once. Values come from the reference behaviour
// (the liaison reference, docs/architecture.md; section in brackets) unless said otherwise.

const KiB = 1024;
const MiB = 1024 * KiB;

/** HTTP request bodies [§2.1]. */
export const HTTP_BODY_LIMIT_BYTES = 256 * KiB;
/** An edge_agent_v1 request or reply on the wire [§1]. */
export const RPC_PAYLOAD_LIMIT_BYTES = 512 * KiB;

/** Field sizes [§2.2]. */
export const TEXT_MAX_BYTES = 16 * KiB;
export const PROJECT_MAX_BYTES = 4096;
export const INSTALLATION_ID_MAX_BYTES = 64;
export const SESSION_ID_MAX_BYTES = 64;
export const DIRECTORY_MAX_BYTES = 4096;
export const MODEL_MAX_BYTES = 128;
export const OPAQUE_ID_LENGTH = 32;
export const ACTOR_ID_MAX_LENGTH = 32;
export const TITLE_MAX_RUNES = 120;
export const HISTORY_PAGE_MAX = 100_000;
export const ANSWERS_MIN = 1;
export const ANSWERS_MAX = 3;
export const QUESTION_ID_MAX_BYTES = 128;
export const ANSWER_MAX_BYTES = 4096;
export const ATTACHMENTS_MAX = 8;
export const ATTACHMENT_PATH_MAX_BYTES = 4096;
export const FILE_PATH_MAX_BYTES = 4096;
export const FILE_NAME_MAX_BYTES = 180;
export const FILE_SIZE_MAX_BYTES = 20 * MiB;
export const FILE_CHUNK_MAX_BYTES = 128 * KiB;
/** Image attachments (.png .jpg .jpeg .gif) are smaller and checked for format and pixels [§2.3]. */
export const IMAGE_MAX_BYTES = 4 * MiB;
export const IMAGE_MAX_PIXELS = 40_000_000;
/** Live file transfers (uploads and reads) on one edge, and how long an idle one lives [§2.3]. */
export const FILE_TRANSFERS_MAX = 8;
export const FILE_TRANSFER_IDLE_MS = 2 * 60_000;
/** file_list returns at most this many entries [§2.3]. */
export const FILE_LIST_MAX = 500;
/** directories: entries read, entries returned, and name+path bytes [§2.3]. */
export const DIRECTORY_READ_MAX = 2000;
export const DIRECTORIES_RETURNED_MAX = 200;
export const DIRECTORY_NAMES_MAX_BYTES = 128 * KiB;

/** Display bounds [§4]; they never stop native execution. */
export const MESSAGE_MAX_BYTES = 64 * KiB;
export const MESSAGES_MAX = 96;
export const MESSAGES_TEXT_MAX_BYTES = 256 * KiB;
export const SNAPSHOT_MAX_BYTES = 480 * KiB;
export const ACTIVITIES_MAX = 128;
export const ACTIVITY_FIELD_MAX_BYTES = 16 * KiB;
export const ACTIVITY_WINDOW_MAX_BYTES = 96 * KiB;
/** Display title fallback: the first user message cut to 80 runes plus an ellipsis [§4]. */
export const DISPLAY_TITLE_FALLBACK_RUNES = 80;

/** Edge-wide limits [§2.2, §2.3]. */
export const EDGE_CONCURRENT_RPCS = 8;
export const EDGE_RPC_TIMEOUT_MS = 20_000;
export const EDGE_LIVE_SESSIONS_MAX = 4;
export const EDGE_REMEMBERED_SESSIONS_MAX = 32;

/** Manager → edge RPC timeout [§2.1]: longer than the edge's own 20 s so the edge answers first. */
export const ROUTER_EDGE_RPC_TIMEOUT_MS = 22_000;
/** watch waits at most this long for the revision to move [§2.3]. */
export const WATCH_WAIT_MS = 15_000;
/**
 * A watch that wakes waits this long more so a burst of deltas lands in one reply [§2.3] (the
 * edge's own watch). The router answers the first change after a quiet spell at once and a burst
 * at most once per this window (session-router watch/watch-bursts.ts).
 */
export const WATCH_COALESCE_MS = 60;
/**
 * api → router timeout: a watch may take WATCH_WAIT_MS plus one edge RPC, so the api allows both
 * plus a margin for a router replica that dies mid-call to be noticed.
 */
export const API_ROUTER_TIMEOUT_MS = WATCH_WAIT_MS + ROUTER_EDGE_RPC_TIMEOUT_MS + 3_000;
/** api → history and router → history request timeout: database work only. */
export const HISTORY_RPC_TIMEOUT_MS = 5_000;

/** Idle leases [§4]. */
export const SAVED_SESSION_IDLE_MS = 30 * 60_000;
export const SAVED_SESSION_MAX_AGE_MS = 24 * 60 * 60_000;
export const TRANSIENT_SESSION_IDLE_MS = 90_000;
export const TRANSIENT_SESSION_MAX_AGE_MS = 30 * 60_000;
export const CLOSED_SNAPSHOT_RETENTION_MS = 24 * 60 * 60_000;
/** The reference reaper runs every second [§4]. */
export const LEASE_REAPER_INTERVAL_MS = 1_000;

/** Sessions list and connectors list page sizes [§2.1, §2.3]. */
export const SESSIONS_PAGE_SIZE = 50;
export const CONNECTORS_LIST_MAX = 100;
/**
 * Per-actor bounds (issue 11): enrollment past CONNECTORS_PER_ACTOR_MAX and saved accesses past
 * ACCESSES_PER_ACTOR_MAX are refused with 409 `limit_reached`. A person has a handful of
 * machines; the bounds stop a script from filling Postgres or the NATS revocation list.
 */
export const CONNECTORS_PER_ACTOR_MAX = 50;
export const ACCESSES_PER_ACTOR_MAX = 500;
export const ACCESSES_PAGE_SIZE_DEFAULT = 20;
export const ACCESSES_PAGE_SIZE_MAX = 100;

/**
 * Edge presence. An edge sends a heartbeat every EDGE_HEARTBEAT_INTERVAL_MS by default (its owner
 * may choose EDGE_HEARTBEAT_INTERVAL_MIN_MS..MAX) and says which interval it keeps; its presence
 * runs out once EDGE_OFFLINE_AFTER_HEARTBEATS intervals pass without one (2 s at the default), and
 * a router that has calls waiting on it then probes it before counting it offline, so a dead edge
 * is known within 3 s and a hung one within 5 s, while a heartbeat that is merely late does not
 * flap. A heartbeat without an interval (an edge older than this rule) keeps the old
 * EDGE_PRESENCE_TTL_MS, so a rollout never makes old edges look offline.
 */
export const EDGE_HEARTBEAT_INTERVAL_MS = 1_000;
export const EDGE_HEARTBEAT_INTERVAL_MIN_MS = 200;
export const EDGE_HEARTBEAT_INTERVAL_MAX_MS = 60_000;
export const EDGE_OFFLINE_AFTER_HEARTBEATS = 2;
export const EDGE_PRESENCE_TTL_MS = 15_000;

/**
 * Router replicas. Each publishes a heartbeat every ROUTER_HEARTBEAT_INTERVAL_MS; an api replica
 * counts one lost once ROUTER_LOST_AFTER_HEARTBEATS of its intervals pass without one while its
 * own NATS connection is up, and sends again the calls it may have held.
 */
export const ROUTER_HEARTBEAT_INTERVAL_MS = 1_000;
export const ROUTER_HEARTBEAT_INTERVAL_MIN_MS = 100;
export const ROUTER_HEARTBEAT_INTERVAL_MAX_MS = 60_000;
export const ROUTER_LOST_AFTER_HEARTBEATS = 3;

/**
 * Bounds of internal messages (schemas.ts), so no message between Tether's services carries
 * unbounded data; snapshots are the exception, bounded by SNAPSHOT_MAX_BYTES and the NATS payload.
 */
export const INTERNAL_ID_MAX_LENGTH = 64;
export const NAME_MAX_LENGTH = 200;
export const DEVICE_MAX_LENGTH = 200;
export const AGENT_KIND_MAX_LENGTH = 32;
export const AGENT_KINDS_MAX = 8;
export const INSTALLATION_SOURCE_MAX_LENGTH = 64;
/** Discovery is bounded on the edge; 64 installations is far beyond any real host. */
export const HEARTBEAT_INSTALLATIONS_MAX = 64;
/** An edge token is base64url(HMAC-SHA-256) = 43 characters; room for a future format. */
export const EDGE_TOKEN_MAX_LENGTH = 128;
export const EPOCH_MAX_LENGTH = 64;
/** A uint64 has at most 20 decimal digits. */
export const EDGE_ID_MAX_DIGITS = 20;
/** Audit record status: a contract status or `http_<code>`; the longest status is 23 characters. */
export const AUDIT_STATUS_MAX_LENGTH = 32;
/** A stored session payload, like the reference's [§4 "Save rules"]: one snapshot plus margin. */
export const STORED_PAYLOAD_MAX_BYTES = 512 * KiB;

/**
 * Journal pages (reference orca §2.1): 40 items by default, 200 at most; the HTTP edge rejects a
 * limit outside 1..200, history clamps whatever reaches it.
 */
export const JOURNAL_PAGE_DEFAULT_LIMIT = 40;
export const JOURNAL_PAGE_MAX_LIMIT = 200;
/** Byte budget of one page's items (an SSE frame or HTTP body stays far below any buffer cap). */
export const JOURNAL_PAGE_MAX_BYTES = 256 * 1024;
/** One item bigger than this travels as a stand-in `{itemId, revision, sequence, oversize}`. */
export const JOURNAL_ITEM_MAX_BYTES = 64 * 1024;

/**
 * Mutation envelope (reference orca §3): the wire bound of `client_operation_id` (the ledger then
 * requires `<13-digit ms>-<32 hex>`), how far in the future an id may be dated, the age beyond
 * which an id the ledger never saw is expired, and the extra time a record is kept so it outlives
 * every moment its id could still be admitted as new.
 */
export const CLIENT_OPERATION_ID_MAX_LENGTH = 512;
export const OPERATION_FUTURE_SKEW_MS = 5 * 60_000;
export const OPERATION_MAX_NEW_AGE_MS = 24 * 60 * 60_000;
export const OPERATION_RETENTION_MS = OPERATION_MAX_NEW_AGE_MS + OPERATION_FUTURE_SKEW_MS;
/** Live ledger records per caller and in total (beyond: `agent_session_operation_capacity`). */
export const OPERATIONS_PER_CALLER_MAX = 512;
export const OPERATIONS_GLOBAL_MAX = 65_536;
/** A submission's `reason`: a contract status or a short cause such as `dispatch_timeout`. */
export const SUBMISSION_REASON_MAX_LENGTH = 64;
