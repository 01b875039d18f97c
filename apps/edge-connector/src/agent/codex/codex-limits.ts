// Bounds of the Codex driver. Values come from the reference edge
// (the liaison reference §3, §2.3; docs/architecture.md) unless a line says otherwise.

const KiB = 1024;
const MiB = 1024 * KiB;

/** One JSON-RPC line from or to the app-server [§3 transport]. */
export const RPC_FRAME_MAX_BYTES = 2 * MiB;
/** Outgoing calls awaiting an answer at once [§3 transport]. */
export const RPC_PENDING_CALLS_MAX = 32;
/** Inbound messages waiting for the consumer; overflow closes the session [§3 transport]. */
export const RPC_EVENT_QUEUE_MAX = 64;
/** `initialize` must answer within this time [§3 handshake]. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/**
 * Any other call to the app-server. Shorter than the edge's own 20 s RPC deadline
 * (EDGE_RPC_TIMEOUT_MS) so the edge can still answer its caller with a status.
 */
export const CALL_TIMEOUT_MS = 15_000;
/** After stdin closes the app-server exits on its own (reference: exit 0 in ~10 ms); then SIGTERM, then SIGKILL. */
export const GRACEFUL_EXIT_MS = 2_000;
export const TERMINATE_EXIT_MS = 2_000;
/** Kept for diagnostics only; stderr never leaves the edge. */
export const STDERR_TAIL_BYTES = 8 * KiB;

/** Per-thread overrides: configured MCP servers plus plugins [§3 threads]. */
export const CONFIG_OVERRIDES_MAX = 256;
/** `mcpServerStatus/list` page used to prove every server is disabled [§3 threads]. */
export const MCP_STATUS_LIMIT = 256;

/** `model/list` paging [§3 catalogs]; the catalog's own bounds are every driver's (../model-catalog.ts). */
export const MODEL_PAGE_SIZE = 32;
export const MODEL_PAGES_MAX = 8;

/** `skills/list` filtering [§3 catalogs]. */
export const SKILLS_MAX = 100;
export const SKILL_NAME_MAX_CHARS = 200;
export const SKILL_DESCRIPTION_MAX_CHARS = 2048;
export const SKILL_PATH_MAX_BYTES = 4096;

// Approval, input-request and native-id bounds are shared by every driver: ../prompt-limits.ts.
// Discovery bounds are every driver's: ../install-discovery.ts.
